"""Named profiles with the Python SDK's high-level Client (docs/profiles.md): one `capa hub serve`,
a `direct` profile of the demo source at /mcp/notes with a deny of its own, and a code profile
whose lowered `maxCalls` ends a run that makes one call too many."""

from __future__ import annotations

import json
import re

import anyio
import pytest

from conftest import SESSION_TIMEOUT_S, http_client_for, make_workspace, start_hub, text_of

pytestmark = pytest.mark.anyio

PROFILES = {
    "notes": {"toolExposure": "direct", "sources": ["demo"], "deny": ["demo.delete_*", "demo.divide"]},
    "tight": {"toolExposure": "code", "sources": ["demo"], "limits": {"maxCalls": 1}},
}


async def test_profiles_serve_their_mode_sources_and_limits(tmp_path) -> None:
    workspace = make_workspace(tmp_path / "profiles", upstreams=("time",))
    # The workspace's capabilities file is JSON, which is YAML.
    config = json.loads(workspace.config_file.read_text())
    config["profiles"] = PROFILES
    config["options"]["toolExposure"] = "code"
    workspace.config_file.write_text(json.dumps(config, indent=2) + "\n")
    hub = start_hub(workspace)
    try:
        with anyio.fail_after(SESSION_TIMEOUT_S):
            async with http_client_for(hub, path="/mcp/notes") as client:
                listed = sorted(t.name for t in (await client.list_tools()).tools)
                assert "read_result" in listed, "a direct profile reads large results back"
                names = [n for n in listed if n != "read_result"]
                assert names, "the demo tools are listed"
                assert all(n.startswith("demo.") for n in names), names
                assert "demo.delete_note" not in names and "demo.divide" not in names
                product = await client.call_tool("demo.multiply", {"a": 6, "b": 7})
                assert not product.is_error, text_of(product)
                assert "42" in text_of(product)
                elsewhere = await client.call_tool("time.get_current_time", {"timezone": "UTC"})
                assert elsewhere.is_error
                assert "unknown tool" in text_of(elsewhere).lower()
                # A result over the limit is kept for read_result, which gives it back in pieces.
                big = "line of the notes " * 4000
                echoed = await client.call_tool("demo.echo", {"text": big})
                handle = re.search(r"kept as (h_[0-9a-f]{32})", text_of(echoed))
                assert handle, text_of(echoed)
                whole, offset = "", 0
                while offset is not None:
                    piece = await client.call_tool("read_result", {"handle": handle.group(1), "offset": offset})
                    assert not piece.is_error, text_of(piece)
                    whole += piece.structured_content["data"]
                    offset = piece.structured_content["next"]
                assert whole == big
            async with http_client_for(hub, path="/mcp/tight") as client:
                names = [t.name for t in (await client.list_tools()).tools]
                assert names == ["search", "describe", "execute"]
                code = "await demo.add({a: 1, b: 2});\nawait demo.add({a: 3, b: 4});\nreturn 1;"
                result = await client.call_tool("execute", {"code": code})
                envelope = result.structured_content
                assert envelope["status"] == "failed", envelope
                assert envelope["error"]["code"] == "max_calls", envelope
            async with http_client_for(hub) as client:
                found = await client.call_tool("search", {"query": ""})
                assert "time" in text_of(found), "the default profile at /mcp serves every source"
    finally:
        hub.stop()
