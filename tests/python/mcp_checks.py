"""Checks shared by test_stdio.py and test_http.py: the same expectations over either transport."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from pydantic import ValidationError

from conftest import HELLO_TEXT, MODERN_VERSION, NAMESPACES, Workspace, text_of

async def call_and_keep(client: Any, name: str, arguments: dict[str, Any]) -> Any:
    """Calls a tool; returns the result, or the ValidationError the SDK raised for a malformed one.

    Returning (not raising) keeps the error from being wrapped in the SDK's task-group
    ExceptionGroup when the client context exits, so the test can re-raise it unwrapped.
    """
    try:
        return await client.call_tool(name, arguments)
    except ValidationError as e:
        return e


def raise_if_error(outcome: Any) -> Any:
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


async def check_negotiation_and_tools(client: Any) -> None:
    assert client.protocol_version == MODERN_VERSION, (
        f"the SDK's auto negotiation ended at {client.protocol_version!r}, not {MODERN_VERSION}: "
        "server/discover was not accepted by the hub"
    )
    assert client.server_info is not None and client.server_info.name == "capabilities"
    assert client.server_capabilities.tools is not None

    listing = await client.list_tools()
    names = {tool.name for tool in listing.tools}
    for namespace in NAMESPACES:
        assert any(n.startswith(namespace + ".") for n in names), f"no {namespace}.* tool in {sorted(names)}"
    for expected in (
        "demo.add",
        "demo.echo",
        "demo.divide",
        "demo.write_note",
        "demo.read_note",
        "everything.echo",
        "everything.get-sum",
        "filesystem.read_text_file",
        "filesystem.write_file",
        "time.get_current_time",
        "time.convert_time",
    ):
        assert expected in names, f"{expected} missing from tools/list: {sorted(names)}"
    assert len(names) == len(listing.tools), "duplicate tool names in tools/list"
    for tool in listing.tools:
        assert tool.input_schema.get("type") == "object", f"{tool.name}: inputSchema is not an object schema"
        assert tool.description, f"{tool.name}: no description"
    add = next(t for t in listing.tools if t.name == "demo.add")
    assert {"a", "b"} <= set(add.input_schema.get("properties", {}))


async def check_demo_calls(client: Any) -> None:
    result = await client.call_tool("demo.add", {"a": 2, "b": 3})
    assert result.is_error is not True
    assert text_of(result).strip() == "5"

    result = await client.call_tool("demo.echo", {"text": "ping from python"})
    assert "ping from python" in text_of(result)

    result = await client.call_tool("demo.write_note", {"title": "py-note", "text": "note body"})
    assert result.is_error is not True
    result = await client.call_tool("demo.read_note", {"title": "py-note"})
    assert "note body" in text_of(result)

    # A tool failure is a result with isError, not a protocol error.
    result = await client.call_tool("demo.divide", {"a": 1, "b": 0})
    assert result.is_error is True
    assert text_of(result)


async def check_unknown_tool(client: Any) -> None:
    """An unknown tool is a tool result with isError (the model reads it and retries with a name
    the hub suggests), carrying the typed error in `_meta`."""
    result = await client.call_tool("demo.ech", {"text": "x"})
    assert result.is_error is True
    message = text_of(result)
    assert "unknown tool `demo.ech`" in message and "demo.echo" in message, message
    assert result.meta["capabilities/error"]["code"] == "unknown_tool", result.meta


async def check_time_utc(client: Any) -> None:
    result = await client.call_tool("time.get_current_time", {"timezone": "UTC"})
    assert result.is_error is not True, text_of(result)
    data = result.structured_content
    assert isinstance(data, dict), result
    assert data["timezone"] == "UTC"
    when = dt.datetime.fromisoformat(data["datetime"])
    assert when.utcoffset() == dt.timedelta(0)
    assert abs((dt.datetime.now(dt.timezone.utc) - when).total_seconds()) < 300


def check_echo_result(result: Any) -> None:
    assert result.is_error is not True
    assert text_of(result) == "Echo: hello through the hub"


def check_read_result(result: Any) -> None:
    assert result.is_error is not True
    assert text_of(result) == HELLO_TEXT


def read_args(workspace: Workspace) -> dict[str, Any]:
    return {"path": str(workspace.hello_path)}


ECHO_ARGS = {"message": "hello through the hub"}
