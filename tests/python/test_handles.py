"""Large results as handles with the Python SDK's Client over `capa mcp` (docs/code-mode.md,
"Large results"): a 2.6 MB result from the Python SDK fixture `sized_server.py` comes back
shortened with a handle, and a second session of the same client (another `capa mcp` process on
the same data dir) reads it back by path and in pieces with `hub.read`."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from conftest import REPO_ROOT, SESSION_TIMEOUT_S, Workspace, make_workspace, stdio_client_for, text_of
from mcp_checks import call_and_keep, raise_if_error

pytestmark = pytest.mark.anyio

PYTHON = REPO_ROOT / "tests" / ".venv" / "bin" / "python"
SIZED = REPO_ROOT / "tests" / "fixtures" / "sized_server.py"


def sized_workspace(root: Path) -> Workspace:
    workspace = make_workspace(root, ())
    servers = [{"id": "sized", "type": "mcp", "def": {"command": str(PYTHON), "args": [str(SIZED)]}}]
    workspace.config_file.write_text(json.dumps({"servers": servers, "options": {"demo": False, "toolExposure": "code"}}) + "\n")
    return workspace


async def execute(workspace: Workspace, code: str) -> dict:
    with anyio.fail_after(SESSION_TIMEOUT_S * 2):
        async with stdio_client_for(workspace) as client:
            ran = raise_if_error(await call_and_keep(client, "execute", {"code": code}))
            assert not ran.is_error, text_of(ran)
            return ran.structured_content


async def test_a_large_result_is_read_back_by_a_later_session(tmp_path: Path) -> None:
    workspace = sized_workspace(tmp_path / "handles")
    big = await execute(workspace, "return await sized.items({ count: 20000 })")
    assert big["status"] == "completed", big
    assert big["truncated"]["result"] is True
    assert len(json.dumps(big["result"], separators=(",", ":"))) <= 24 * 1024
    [handle] = big["handles"]
    assert handle["of"] == "result" and handle["type"] == "object"
    assert handle["bytes"] > 2_000_000, handle
    assert handle["preview"] == "object with 2 keys: items, total"

    h = json.dumps(handle["handle"])
    read = await execute(
        workspace,
        f"""const last = await hub.read({h}, {{ path: "items[19999].title" }});
        let next = 0, bytes = 0;
        while (next !== null) {{ const p = await hub.read({h}, {{ offset: next, length: 500000 }}); bytes += p.data.length; next = p.next; }}
        return {{ last: last.data, bytes }};""",
    )
    assert read["status"] == "completed", read
    assert read["result"]["last"].startswith("item 19999 x")
    assert read["result"]["bytes"] == handle["bytes"]
