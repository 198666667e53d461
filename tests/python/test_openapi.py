"""An OpenAPI source in a `direct` profile with the Python SDK's Client (docs/openapi.md): the
FastAPI app tests/fixtures/openapi_server.py served through the hub, each operation a tool the
client lists and calls. The SDK checks every structured result against the tool's output schema,
so an operation answering an object lists that object's schema, and one answering an array lists
none (MCP's `outputSchema` is an object schema)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import anyio
import pytest

from conftest import REPO_ROOT, SESSION_TIMEOUT_S, http_client_for, make_workspace, start_hub, text_of

pytestmark = pytest.mark.anyio

SERVER = REPO_ROOT / "tests" / "fixtures" / "openapi_server.py"


async def test_a_direct_profile_lists_and_calls_operations(tmp_path) -> None:
    port_file = tmp_path / "port"
    api = subprocess.Popen([sys.executable, str(SERVER), str(port_file)])
    try:
        deadline = time.monotonic() + 20
        while not port_file.exists() or not port_file.read_text():
            assert time.monotonic() < deadline, "the API server did not start"
            assert api.poll() is None, "the API server exited"
            time.sleep(0.05)
        port = port_file.read_text()
        workspace = make_workspace(tmp_path / "openapi", upstreams=())
        config = json.loads(workspace.config_file.read_text())
        config["servers"] = [
            {"id": "tasks", "type": "openapi", "def": {"spec": f"http://127.0.0.1:{port}/openapi.json"}}
        ]
        config["options"]["toolExposure"] = "code"
        config["profiles"] = {"api": {"toolExposure": "direct", "sources": ["tasks"]}}
        workspace.config_file.write_text(json.dumps(config, indent=2) + "\n")
        hub = start_hub(workspace)
        try:
            with anyio.fail_after(SESSION_TIMEOUT_S):
                async with http_client_for(hub, path="/mcp/api") as client:
                    tools = {t.name: t for t in (await client.list_tools()).tools}
                    assert "tasks.getTask" in tools and "tasks.listTasks" in tools, sorted(tools)
                    task_schema = tools["tasks.getTask"].output_schema
                    assert task_schema and task_schema["type"] == "object", task_schema
                    assert tools["tasks.listTasks"].output_schema is None
                    assert tools["tasks.getTask"].annotations.read_only_hint is True
                    assert tools["tasks.deleteTask"].annotations.destructive_hint is True

                    one = await client.call_tool("tasks.getTask", {"task_id": 1})
                    assert not one.is_error, text_of(one)
                    assert one.structured_content["title"] == "Water the plants"
                    listed = await client.call_tool("tasks.listTasks", {"state": "done"})
                    assert not listed.is_error, text_of(listed)
                    assert [t["id"] for t in json.loads(text_of(listed))] == [2]
                    missing = await client.call_tool("tasks.getTask", {"task_id": 404})
                    assert missing.is_error
                    assert "HTTP 404" in text_of(missing) and "no task 404" in text_of(missing)
        finally:
            hub.stop()
    finally:
        api.terminate()
        api.wait(timeout=10)
