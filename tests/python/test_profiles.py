"""Named profiles with the Python SDK's high-level Client (docs/profiles.md): one `capa hub serve`,
a `direct` profile of the demo source at /mcp/notes with a deny of its own, and a code profile
whose lowered `maxCalls` ends a run that makes one call too many."""

from __future__ import annotations

import json

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
                names = sorted(t.name for t in (await client.list_tools()).tools)
                assert names, "the demo tools are listed"
                assert all(n.startswith("demo.") for n in names), names
                assert "demo.delete_note" not in names and "demo.divide" not in names
                product = await client.call_tool("demo.multiply", {"a": 6, "b": 7})
                assert not product.is_error, text_of(product)
                assert "42" in text_of(product)
                elsewhere = await client.call_tool("time.get_current_time", {"timezone": "UTC"})
                assert elsewhere.is_error
                assert "unknown tool" in text_of(elsewhere).lower()
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
