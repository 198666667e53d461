"""The Python SDK's high-level Client against `capa hub serve` over Streamable HTTP, with the
hub's bearer token; plus the HTTP guard (token, Host, Origin) and SIGTERM."""

from __future__ import annotations

import http.client
import json
import signal
import time

import anyio
import pytest

from conftest import (
    LEGACY_VERSION,
    MODERN_VERSION,
    SESSION_TIMEOUT_S,
    RunningHub,
    descendants,
    http_client_for,
    leaf_exceptions,
    make_workspace,
    start_hub,
    wait_gone,
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

INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "capa-python-guard-test", "version": "1.0.0"},
        },
    }
)


def post_mcp(hub: RunningHub, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    """One raw POST to /mcp with exactly these extra headers (Host included when given)."""
    conn = http.client.HTTPConnection("127.0.0.1", hub.port, timeout=10)
    try:
        conn.request(
            "POST",
            "/mcp",
            body=INITIALIZE,
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                **headers,
            },
        )
        response = conn.getresponse()
        # An accepted initialize answers with an SSE stream that stays open; the status is enough.
        body = response.read() if response.status >= 300 else b""
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body
    finally:
        conn.close()


def test_guard_requires_token_and_loopback_host_and_origin(hub: RunningHub) -> None:
    good = {"Authorization": f"Bearer {hub.token}"}

    status, headers, body = post_mcp(hub, {})
    assert status == 401, body
    assert headers.get("www-authenticate", "").startswith("Bearer"), headers

    status, _, body = post_mcp(hub, {"Authorization": "Bearer " + "0" * len(hub.token)})
    assert status == 401, body

    status, _, body = post_mcp(hub, {"Authorization": hub.token})  # no "Bearer " scheme
    assert status == 401, body

    status, _, body = post_mcp(hub, {**good, "Host": "evil.example.com"})
    assert status == 403, body

    status, _, body = post_mcp(hub, {**good, "Host": f"evil.example.com:{hub.port}"})
    assert status == 403, body

    status, _, body = post_mcp(hub, {**good, "Origin": "http://evil.example.com"})
    assert status == 403, body

    # Only the hub's own origin is allowed, not any loopback port.
    other_port = 1 if hub.port != 1 else 2
    status, _, body = post_mcp(hub, {**good, "Origin": f"http://127.0.0.1:{other_port}"})
    assert status == 403, body

    for host in (f"127.0.0.1:{hub.port}", f"localhost:{hub.port}"):
        status, _, body = post_mcp(hub, {**good, "Host": host, "Origin": f"http://{host}"})
        assert status == 200, (host, status, body)


async def test_client_without_token_is_refused(hub: RunningHub) -> None:
    from mcp.shared.exceptions import MCPError

    with anyio.fail_after(SESSION_TIMEOUT_S):
        with pytest.raises(BaseException) as raised:
            async with http_client_for(hub, token=None):
                pass
    leaves = leaf_exceptions(raised.value)
    assert any(isinstance(e, MCPError) for e in leaves), leaves


async def test_negotiates_2026_and_lists_every_source(hub: RunningHub) -> None:
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with http_client_for(hub) as client:
            await check_negotiation_and_tools(client)


async def test_demo_tools_and_errors(hub: RunningHub) -> None:
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with http_client_for(hub) as client:
            await check_demo_calls(client)
            await check_unknown_tool(client)


async def test_state_is_shared_between_clients(hub: RunningHub) -> None:
    """One hub owns the state: a note written by one client is read by the next."""
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with http_client_for(hub) as writer:
            await writer.call_tool("demo.write_note", {"title": "shared", "text": "from client one"})
        async with http_client_for(hub, mode="legacy") as reader:
            result = await reader.call_tool("demo.read_note", {"title": "shared"})
            assert "from client one" in result.content[0].text


async def test_time_get_current_time_utc(hub: RunningHub) -> None:
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with http_client_for(hub) as client:
            assert client.protocol_version == MODERN_VERSION
            await check_time_utc(client)


async def test_everything_echo(hub: RunningHub) -> None:
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with http_client_for(hub) as client:
            assert client.protocol_version == MODERN_VERSION
            outcome = await call_and_keep(client, "everything.echo", ECHO_ARGS)
    check_echo_result(raise_if_error(outcome))


async def test_filesystem_reads_the_file_we_wrote(hub: RunningHub) -> None:
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with http_client_for(hub) as client:
            assert client.protocol_version == MODERN_VERSION
            outcome = await call_and_keep(client, "filesystem.read_text_file", read_args(hub.workspace))
    check_read_result(raise_if_error(outcome))


async def test_legacy_client_gets_upstream_results(hub: RunningHub) -> None:
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with http_client_for(hub, mode="legacy") as client:
            assert client.protocol_version == LEGACY_VERSION
            check_echo_result(await client.call_tool("everything.echo", ECHO_ARGS))
            check_read_result(await client.call_tool("filesystem.read_text_file", read_args(hub.workspace)))
            await check_time_utc(client)


def test_sigterm_stops_the_hub_and_its_upstreams(tmp_path) -> None:
    ws = make_workspace(tmp_path / "sigterm")
    hub = start_hub(ws)
    try:
        children = descendants(hub.proc.pid)
        assert len(children) >= 3, children  # time, everything, filesystem (and their own children)
        started = time.monotonic()
        hub.proc.send_signal(signal.SIGTERM)
        code = hub.proc.wait(10)
        took = time.monotonic() - started
        assert code == 0, (code, hub.log())
        assert took < 10
        assert not (ws.data_dir / "hub.json").exists(), "hub.json left behind after SIGTERM"
        left = wait_gone([pid for pid, _ in children], 5.0)
        assert not left, [c for c in children if c[0] in left]
    finally:
        hub.stop()
