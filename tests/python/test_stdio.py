"""The Python SDK's high-level Client against `capa --config FILE mcp` over stdio.

With fresh data dirs no hub is running, so `capa mcp` runs the hub inside its own process
(embedded hub); the last tests start a hub first and check that `capa mcp` forwards to it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import anyio
import pytest
from pydantic import ValidationError

from conftest import (
    LEGACY_VERSION,
    MODERN_VERSION,
    NAMESPACES,
    SESSION_TIMEOUT_S,
    RunningHub,
    Workspace,
    processes_mentioning,
    stdio_client_for,
)
from mcp_checks import (
    ECHO_ARGS,
    call_and_keep,
    check_demo_calls,
    check_echo_result,
    check_negotiation_and_tools,
    check_read_result,
    check_time_utc,
    check_unknown_tool,
    raise_if_error,
    read_args,
)

pytestmark = pytest.mark.anyio


async def test_negotiates_2026_and_lists_every_source(workspace: Workspace) -> None:
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(workspace) as client:
            await check_negotiation_and_tools(client)


async def test_demo_tools_and_errors(workspace_with: Callable[..., Workspace]) -> None:
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(workspace_with()) as client:
            await check_demo_calls(client)
            await check_unknown_tool(client)


async def test_time_get_current_time_utc(workspace_with: Callable[..., Workspace]) -> None:
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(workspace_with("time")) as client:
            assert client.protocol_version == MODERN_VERSION
            await check_time_utc(client)


async def test_everything_echo(workspace_with: Callable[..., Workspace]) -> None:
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(workspace_with("everything")) as client:
            assert client.protocol_version == MODERN_VERSION
            outcome = await call_and_keep(client, "everything.echo", ECHO_ARGS)
    check_echo_result(raise_if_error(outcome))


async def test_filesystem_reads_the_file_we_wrote(workspace_with: Callable[..., Workspace]) -> None:
    workspace = workspace_with("filesystem")
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(workspace) as client:
            assert client.protocol_version == MODERN_VERSION
            outcome = await call_and_keep(client, "filesystem.read_text_file", read_args(workspace))
    check_read_result(raise_if_error(outcome))


async def test_legacy_client_gets_upstream_results(workspace: Workspace) -> None:
    """The same upstream calls through an initialize-era (2025-11-25) session work too."""
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(workspace, mode="legacy") as client:
            assert client.protocol_version == LEGACY_VERSION
            check_echo_result(await client.call_tool("everything.echo", ECHO_ARGS))
            check_read_result(await client.call_tool("filesystem.read_text_file", read_args(workspace)))
            await check_time_utc(client)
            result = await client.call_tool("demo.add", {"a": 20, "b": 22})
            assert result.content[0].text.strip() == "42"


async def test_upstreams_stop_when_the_client_closes(workspace_with: Callable[..., Workspace]) -> None:
    workspace = workspace_with("filesystem")
    marker = str(workspace.files_dir)  # only the filesystem server of this test has it in argv
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(workspace) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert "filesystem.read_text_file" in names
            assert processes_mentioning(marker), "filesystem upstream not found while the session is open"
    with anyio.fail_after(10):
        while left := processes_mentioning(marker):
            await anyio.sleep(0.1)
    assert not left


# --------------------------------------------------------------------------------------------------
# `capa mcp` while a hub runs: a stdio bridge to that hub.


def bridge_workspace(hub: RunningHub) -> Workspace:
    """The running hub's dirs and capabilities file, so `capa mcp` finds and forwards to it.
    RUST_LOG=info makes `capa mcp` log which way it went."""
    return dataclasses.replace(hub.workspace, env={**hub.workspace.env, "RUST_LOG": "info"})


async def test_bridge_forwards_to_the_running_hub(hub: RunningHub) -> None:
    ws = bridge_workspace(hub)
    log_path = ws.root / "bridge.stderr.log"
    with open(log_path, "w") as log:
        with anyio.fail_after(SESSION_TIMEOUT_S):
            async with stdio_client_for(ws, errlog=log) as client:
                assert client.protocol_version == MODERN_VERSION
                names = {t.name for t in (await client.list_tools()).tools}
    log_text = log_path.read_text()
    assert "forwarding MCP over stdio to the running hub" in log_text, log_text
    assert "using a hub inside this command" not in log_text, log_text
    for namespace in NAMESPACES:
        assert any(n.startswith(namespace + ".") for n in names), sorted(names)


async def test_bridge_calls_a_demo_tool(hub: RunningHub) -> None:
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(bridge_workspace(hub)) as client:
            assert client.protocol_version == MODERN_VERSION
            outcome = await call_and_keep(client, "demo.add", {"a": 2, "b": 3})
    result = raise_if_error(outcome)
    assert result.content[0].text.strip() == "5"
