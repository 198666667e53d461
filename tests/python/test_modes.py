"""The `search` and `on-demand` exposure modes (tool-exposure.md) with the Python SDK's Client
(mcp 2.x, version negotiation `auto` -> 2026-07-28): over `capa mcp` (stdio), and over
`capa hub serve` (Streamable HTTP), where 2026-07-28 requests carry no MCP session and the hub
keeps a client's found tools per client name and version."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from conftest import (
    EVERYTHING_JS,
    FILESYSTEM_JS,
    HELLO_TEXT,
    MODERN_VERSION,
    SESSION_TIMEOUT_S,
    RunningHub,
    Workspace,
    make_workspace,
    start_hub,
    stdio_client_for,
    text_of,
)

pytestmark = pytest.mark.anyio

ERROR_META = "capabilities/error"
SUM_2_3 = "The sum of 2 and 3 is 5."
GET_SUM_PROPERTIES = {
    "a": {"type": "number", "description": "First number"},
    "b": {"type": "number", "description": "Second number"},
}
SIGNATURE = re.compile(r"^([A-Za-z0-9_-]+\.[^\s(]+)\((.*)\)( {3}\[asks\])?$")


def modes_workspace(root: Path, mode: str, *, skills: list[dict[str, Any]] | None = None) -> Workspace:
    """demo off, server-everything and server-filesystem (serving hello.txt), in `mode`."""
    workspace = make_workspace(root, ())
    servers = [
        {"id": "everything", "type": "mcp", "def": {"command": "node", "args": [str(EVERYTHING_JS), "stdio"]}},
        {
            "id": "filesystem",
            "type": "mcp",
            "def": {"command": "node", "args": [str(FILESYSTEM_JS), str(workspace.files_dir)]},
        },
    ]
    doc: dict[str, Any] = {"servers": servers, "options": {"toolExposure": mode, "demo": False}}
    if skills is not None:
        doc["skills"] = skills
    workspace.config_file.write_text(json.dumps(doc, indent=2) + "\n")
    return workspace


@asynccontextmanager
async def http_client_named(hub: RunningHub, name: str, version: str = "1.0.0") -> AsyncIterator[Any]:
    """The SDK's Client over Streamable HTTP with the hub's token and this clientInfo."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp.types import Implementation

    headers = {"Authorization": f"Bearer {hub.token}"}
    async with create_mcp_http_client(headers=headers) as http:
        async with Client(
            streamable_http_client(hub.mcp_url, http_client=http),
            mode="auto",
            client_info=Implementation(name=name, version=version),
        ) as client:
            yield client


# --------------------------------------------------------------------------------------------------
# Reading answers


def error_code(result: Any) -> str | None:
    return ((result.meta or {}).get(ERROR_META) or {}).get("code")


def ok_text(result: Any) -> str:
    assert result.is_error is not True, f"unexpected isError: {text_of(result)}"
    return text_of(result)


def assert_code(result: Any, code: str) -> str:
    assert result.is_error is True, f"expected isError ({code}): {text_of(result)}"
    assert error_code(result) == code, f"{result.meta}\n{text_of(result)}"
    return text_of(result)


def signatures(text: str) -> tuple[str, list[dict[str, Any]]]:
    """(header, [{id, params, asks, description}]) of a search / setup_tools answer."""
    header, *rest = text.rstrip("\n").split("\n")
    tools: list[dict[str, Any]] = []
    for line in rest:
        if line[:1].isspace():
            assert tools and "description" not in tools[-1], f"stray description line {line!r}:\n{text}"
            tools[-1]["description"] = line.strip()
            continue
        m = SIGNATURE.match(line)
        assert m, f"not a signature line: {line!r}\n{text}"
        tools.append({"id": m[1], "params": m[2], "asks": bool(m[3])})
    return header, tools


def ids_of(text: str) -> list[str]:
    return [t["id"] for t in signatures(text)[1]]


async def call(client: Any, name: str, data: dict[str, Any]) -> Any:
    return await client.call_tool("call_tool", {"name": name, "data": data})


def check_schema_answer(result: Any) -> None:
    """invalid_arguments with get-sum's full schema, pretty-printed in the text and in _meta."""
    text = assert_code(result, "invalid_arguments")
    schema = result.meta[ERROR_META].get("inputSchema")
    assert isinstance(schema, dict), result.meta
    assert schema.get("properties") == GET_SUM_PROPERTIES, schema
    assert schema.get("required") == ["a", "b"], schema
    pretty = json.dumps(schema, indent=2)
    assert pretty in text, f"the text does not hold the pretty input schema:\n{text}\n---\n{pretty}"


async def search_flow(client: Any, workspace: Workspace) -> None:
    """search -> call_tool against both servers, accumulation, not_activated, invalid arguments."""
    listing = await client.list_tools()
    assert [t.name for t in listing.tools] == ["search", "call_tool"]

    assert_code(await call(client, "everything.get-sum", {"a": 2, "b": 3}), "not_activated")

    found = ok_text(await client.call_tool("search", {"query": "sum of two numbers"}))
    header, tools = signatures(found)
    assert re.fullmatch(r"\d+ matching tools?, best first:", header), found
    assert int(header.split()[0]) == len(tools), found
    assert tools[0]["id"] == "everything.get-sum", found
    assert re.search(r"\ba: number\b.*\bb: number\b", tools[0]["params"]), found
    assert "Returns the sum of two numbers" in tools[0].get("description", ""), found
    assert "everything.echo" not in ids_of(found)
    assert ok_text(await call(client, "everything.get-sum", {"a": 2, "b": 3})) == SUM_2_3

    found = ok_text(await client.call_tool("search", {"query": "read text file"}))
    assert "filesystem.read_text_file" in ids_of(found), found
    assert "everything.echo" not in ids_of(found)
    read = await call(client, "filesystem.read_text_file", {"path": str(workspace.hello_path)})
    assert ok_text(read) == HELLO_TEXT
    # The first search's match is still callable; a never-found tool is not.
    assert ok_text(await call(client, "everything.get-sum", {"a": 2, "b": 3})) == SUM_2_3
    assert_code(await call(client, "everything.echo", {"message": "hi"}), "not_activated")

    check_schema_answer(await call(client, "everything.get-sum", {"a": 2}))
    check_schema_answer(await call(client, "everything.get-sum", {"a": 2, "b": "3"}))

    refused = await client.call_tool("setup_tools", {"names": ["@everything"]})
    assert refused.is_error is True, text_of(refused)
    assert "search(" in text_of(refused)

    listed = ok_text(await client.call_tool("search", {"query": ""}))
    header, tools = signatures(listed)
    assert header == "10 tools, alphabetically:", listed
    assert [t["id"] for t in tools] == sorted(t["id"] for t in tools)


async def test_search_mode_over_stdio(tmp_path: Path) -> None:
    workspace = modes_workspace(tmp_path / "search", "search")
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(workspace) as client:
            assert client.protocol_version == MODERN_VERSION
            await search_flow(client, workspace)


SKILLS = [
    {"id": "math", "description": "Sums", "requires": ["everything.get-sum"]},
    {"id": "files", "description": "Reads the project files", "requires": ["@filesystem"]},
]


async def test_on_demand_mode_over_stdio(tmp_path: Path) -> None:
    workspace = modes_workspace(tmp_path / "on-demand", "on-demand", skills=SKILLS)
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(workspace) as client:
            assert client.protocol_version == MODERN_VERSION
            listing = await client.list_tools()
            assert [t.name for t in listing.tools] == ["setup_tools", "call_tool"]
            description = listing.tools[0].description or ""
            for part in ("math", "Sums", "files", "@everything", "@filesystem"):
                assert part in description, description

            assert_code(await call(client, "everything.get-sum", {"a": 2, "b": 3}), "not_activated")

            answer = ok_text(await client.call_tool("setup_tools", {"names": ["math"]}))
            header, tools = signatures(answer)
            assert re.match(r"Activated 1 tools?;", header), answer
            assert [t["id"] for t in tools] == ["everything.get-sum"], answer
            assert ok_text(await call(client, "everything.get-sum", {"a": 2, "b": 3})) == SUM_2_3
            assert_code(await call(client, "everything.echo", {"message": "hi"}), "not_activated")
            check_schema_answer(await call(client, "everything.get-sum", {"b": 3}))

            answer = ok_text(await client.call_tool("setup_tools", {"names": ["@everything"]}))
            header, tools = signatures(answer)
            m = re.match(r"Activated (\d+) tools?;", header)
            assert m and int(m[1]) == len(tools) >= 10, answer
            assert all(t["id"].startswith("everything.") for t in tools), answer
            assert ok_text(await call(client, "everything.echo", {"message": "hi"})) == "Echo: hi"
            read_args = {"path": str(workspace.hello_path)}
            assert_code(await call(client, "filesystem.read_text_file", read_args), "not_activated")

            answer = ok_text(await client.call_tool("setup_tools", {"names": ["files"]}))
            assert "filesystem.read_text_file" in ids_of(answer), answer
            assert ok_text(await call(client, "filesystem.read_text_file", read_args)) == HELLO_TEXT

            assert_code(await client.call_tool("setup_tools", {"names": ["nope"]}), "unknown_skill")


async def test_search_matches_accumulate_across_stateless_http_requests(tmp_path: Path) -> None:
    """2026-07-28 over HTTP has no MCP session: found tools belong to the client's name+version."""
    workspace = modes_workspace(tmp_path / "search-http", "search")
    hub = start_hub(workspace)
    try:
        with anyio.fail_after(SESSION_TIMEOUT_S):
            async with http_client_named(hub, "capa-modes-a") as a:
                assert a.protocol_version == MODERN_VERSION
                await search_flow(a, workspace)
            # Another client (name) has found nothing.
            async with http_client_named(hub, "capa-modes-b") as b:
                assert b.protocol_version == MODERN_VERSION
                assert_code(await call(b, "everything.get-sum", {"a": 2, "b": 3}), "not_activated")
                # Its own search makes the tool callable for it.
                assert "everything.get-sum" in ids_of(ok_text(await b.call_tool("search", {"query": "sum"})))
                assert ok_text(await call(b, "everything.get-sum", {"a": 2, "b": 3})) == SUM_2_3
            # The same name at another version is another client.
            async with http_client_named(hub, "capa-modes-a", "2.0.0") as a2:
                assert_code(await call(a2, "filesystem.read_text_file", {"path": str(workspace.hello_path)}), "not_activated")
            # The same name and version again: what `a` found is still callable.
            async with http_client_named(hub, "capa-modes-a") as again:
                read = await call(again, "filesystem.read_text_file", {"path": str(workspace.hello_path)})
                assert ok_text(read) == HELLO_TEXT
                assert ok_text(await call(again, "everything.get-sum", {"a": 2, "b": 3})) == SUM_2_3
    finally:
        hub.stop()
