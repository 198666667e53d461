"""Runs that outlive the process that started them (issue 16), with the Python SDK's Client.

- A client whose own `capa mcp` paused a run comes back through a new `capa mcp` and resumes at
  once: the replay waits for the run's sources to connect instead of failing with
  `everything is not defined`.
- A source the run used that cannot be served on resume pauses the run (`awaiting_connection`,
  `source_not_ready`) rather than failing it; the same resume goes on once the source is back.
- A hub killed (SIGKILL) while a call is in flight leaves the run `interrupted`; after a restart
  `resume` replays it. The call that was in flight is made again only if its tool is read-only;
  otherwise the guest gets `outcome_unknown` (tests/fixtures/slow_server.py has one of each).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

from conftest import SESSION_TIMEOUT_S, Workspace, http_client_for, make_workspace, start_hub, stdio_client_for
from conftest import capa_async, execute, kill_hard

pytestmark = pytest.mark.anyio

# A journaled call to a source that takes a while to start, then a call that asks a person.
SUM_THEN_DELETE = """
const sum = await everything.get_sum({ a: 2, b: 3 });
await demo.write_note({ title: "resumed", text: "x" });
const deleted = await demo.delete_note({ title: "resumed" });
return { sum, deleted };
"""

# A quick call, a call still in flight when the hub is killed, then another quick one.
KILLED_MID_CALL = """
const before = await everything.get_sum({ a: 1, b: 2 });
let middle;
try {
  middle = await slow.%s({ seconds: %s });
} catch (e) {
  middle = { code: e.code, retryable: e.retryable };
}
const after = await everything.get_sum({ a: 3, b: 4 });
return { before, middle, after };
"""

SLOW_SERVER = Path(__file__).resolve().parents[1] / "fixtures" / "slow_server.py"
PYTHON = Path(__file__).resolve().parents[1] / ".venv" / "bin" / "python"


def everything_workspace(root: Path) -> Workspace:
    workspace = make_workspace(root, ("everything",))
    config = json.loads(workspace.config_file.read_text())
    config["options"]["toolExposure"] = "code"
    workspace.config_file.write_text(json.dumps(config, indent=2) + "\n")
    workspace.env["CAPA_NO_BROWSER"] = "1"
    return workspace


def sum_text(value: Any) -> str:
    return json.dumps(value)


async def pause_then_approve(workspace: Workspace) -> str:
    """Runs SUM_THEN_DELETE through a `capa mcp` of its own until it waits for approval, lets
    that `capa mcp` end, and approves from a terminal (no hub runs then)."""
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(workspace) as client:
            envelope, _ = await execute(client, {"code": SUM_THEN_DELETE})
    assert envelope["status"] == "awaiting_approval", envelope
    assert [c["address"] for c in envelope["calls"]][:2] == ["everything.get-sum", "demo.write_note"], envelope
    run_id = envelope["runId"]
    approved = await capa_async(workspace, "hub", "approve", run_id, terminal=True)
    assert approved.returncode == 0, approved.stderr
    return run_id


async def test_resume_from_a_new_capa_mcp_waits_for_the_runs_sources(tmp_path: Path) -> None:
    workspace = everything_workspace(tmp_path / "ws")
    run_id = await pause_then_approve(workspace)
    # A new `capa mcp`: its hub has just started, server-everything is still connecting, and the
    # client resumes before it lists anything.
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(workspace) as client:
            done, _ = await execute(client, {"resume": run_id})
    assert done["status"] == "completed", done
    assert done["runId"] == run_id
    assert "5" in sum_text(done["result"]["sum"]), done
    assert done["result"]["deleted"] == 'deleted note "resumed"', done


async def test_a_source_that_cannot_serve_the_resume_pauses_the_run(tmp_path: Path) -> None:
    workspace = everything_workspace(tmp_path / "ws")
    run_id = await pause_then_approve(workspace)
    original = workspace.config_file.read_text()
    # The source's start line changes outside the app: it waits for the person's confirmation,
    # so the run cannot replay its journaled call to it.
    config = json.loads(original)
    config["servers"][0]["def"]["env"] = {"CHANGED": "1"}
    workspace.config_file.write_text(json.dumps(config, indent=2) + "\n")
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(workspace) as client:
            waiting, _ = await execute(client, {"resume": run_id})
    assert waiting["status"] == "awaiting_connection", waiting
    assert waiting["runId"] == run_id
    assert waiting["error"]["code"] == "source_not_ready", waiting
    assert "everything" in waiting["error"]["message"], waiting
    assert "resume" in waiting["error"]["hint"], waiting

    # Back as it was: the same resume goes on (the approval still holds).
    workspace.config_file.write_text(original)
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(workspace) as client:
            done, _ = await execute(client, {"resume": run_id})
    assert done["status"] == "completed", done
    assert done["result"]["deleted"] == 'deleted note "resumed"', done


def in_flight_run(workspace: Workspace, address: str) -> str | None:
    """The run with a call to `address` in flight, read from the hub's SQLite file (read-only)."""
    database = workspace.data_dir / "hub.db"
    if not database.exists():
        return None
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=1) as db:
        row = db.execute(
            "SELECT run_id FROM run_calls WHERE in_flight = 1 AND address = ?", (address,)
        ).fetchone()
    return row[0] if row else None


@pytest.mark.parametrize(
    ("tool", "seconds", "expected"),
    [
        # Not read-only: never made twice; the guest hears that its outcome is unknown.
        ("slow_write", 120, {"code": "outcome_unknown", "retryable": False}),
        # Read-only: made again on replay.
        ("slow_read", 2, {"result": "read after 2.0 s"}),
    ],
)
async def test_a_run_whose_hub_is_killed_mid_call_is_interrupted_then_resumed(
    tmp_path: Path, tool: str, seconds: int, expected: Any
) -> None:
    workspace = everything_workspace(tmp_path / "ws")
    config = json.loads(workspace.config_file.read_text())
    config["servers"].append({"id": "slow", "type": "mcp", "def": {"command": str(PYTHON), "args": [str(SLOW_SERVER)]}})
    workspace.config_file.write_text(json.dumps(config, indent=2) + "\n")
    code = KILLED_MID_CALL % (tool, seconds)
    hub = start_hub(workspace)
    run_id = None
    try:
        async def run_until_killed() -> None:
            try:
                async with http_client_for(hub) as client:
                    await execute(client, {"code": code})
            except Exception:  # the hub dies under the request: that is the point
                pass

        with anyio.fail_after(SESSION_TIMEOUT_S):
            async with anyio.create_task_group() as group:
                group.start_soon(run_until_killed)
                while (run_id := in_flight_run(workspace, f"slow.{tool}")) is None:
                    await anyio.sleep(0.05)
                kill_hard(hub.proc)
    finally:
        hub.stop()
    assert run_id is not None

    (workspace.data_dir / "hub.json").unlink(missing_ok=True)
    hub = start_hub(workspace)
    try:
        detail = hub.api(f"/api/runs/{run_id}")["run"]
        assert detail["status"] == "interrupted", detail
        assert [(c["address"], c["inFlight"]) for c in detail["calls"]] == [
            ("everything.get-sum", False),
            (f"slow.{tool}", True),
        ], detail
        with anyio.fail_after(SESSION_TIMEOUT_S):
            async with http_client_for(hub) as client:
                done, _ = await execute(client, {"resume": run_id})
        assert done["status"] == "completed", f"{done}\nhub log:\n{hub.log()}"
        result = done["result"]
        assert result["middle"] == expected, result
        assert "3" in sum_text(result["before"]) and "7" in sum_text(result["after"]), result
        detail = hub.api(f"/api/runs/{run_id}")["run"]
        assert detail["status"] == "completed", detail
        assert [c["inFlight"] for c in detail["calls"]] == [False, False, False], detail
    finally:
        hub.stop()
