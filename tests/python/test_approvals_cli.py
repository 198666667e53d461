"""Approvals in code mode for a client without elicitation: the envelope says `awaiting_approval`,
a person decides with `capa hub approve|deny` at a terminal, and `execute({resume})` continues the
run, also after `capa hub serve` was killed with SIGKILL while the run was paused."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from conftest import (
    ADDRESS,
    DELETE_CAUGHT,
    DELETE_ONE,
    DELETE_ONE_RESULT,
    DENIED_RESULT,
    SESSION_TIMEOUT_S,
    allow_policy,
    approvals_workspace,
    assert_no_url_or_token,
    capa_async,
    check_awaiting,
    cli_pending,
    execute,
    http_client_for,
    kill_hard,
    start_hub,
    stdio_client_for,
)

pytestmark = pytest.mark.anyio


async def test_no_elicitation_cli_approve_then_resume(tmp_path: Path) -> None:
    workspace = approvals_workspace(tmp_path / "ws")
    with anyio.fail_after(SESSION_TIMEOUT_S * 2):
        async with stdio_client_for(workspace) as client:
            envelope, text = await execute(client, {"code": DELETE_ONE})
            item = check_awaiting(workspace, envelope, text)
            run_id = envelope["runId"]

            # Until a person decides, resume answers the same pending envelope.
            same, same_text = await execute(client, {"resume": run_id})
            assert same["status"] == "awaiting_approval", same
            assert same["runId"] == run_id
            assert [p["id"] for p in same["pending"]] == [item["id"]], same
            assert_no_url_or_token(workspace, same_text)

            listed = await anyio.to_thread.run_sync(cli_pending, workspace)
            assert len(listed) == 1, listed
            assert listed[0]["id"] == item["id"], listed
            assert listed[0]["runId"] == run_id and listed[0]["address"] == ADDRESS, listed
            assert listed[0]["preview"] == {"title": "doomed"}, listed
            assert isinstance(listed[0]["reason"], str) and listed[0]["reason"], listed

            # An agent's shell has no terminal: it cannot approve its own call.
            refused = await capa_async(workspace, "hub", "approve", run_id)
            assert refused.returncode != 0, refused.stdout
            assert "interactive terminal" in refused.stderr, refused.stderr
            assert len(await anyio.to_thread.run_sync(cli_pending, workspace)) == 1

            approved = await capa_async(workspace, "hub", "approve", run_id, terminal=True)
            assert approved.returncode == 0, f"capa hub approve exited {approved.returncode}:\n{approved.stdout}"
            assert run_id in approved.stdout, approved.stdout  # it says what it approved
            assert await anyio.to_thread.run_sync(cli_pending, workspace) == []

            done, _ = await execute(client, {"resume": run_id})
            assert done["status"] == "completed", done
            assert done["runId"] == run_id
            assert done["result"] == DELETE_ONE_RESULT, done


async def test_no_elicitation_cli_deny_then_resume(tmp_path: Path) -> None:
    workspace = approvals_workspace(tmp_path / "ws")
    with anyio.fail_after(SESSION_TIMEOUT_S * 2):
        async with stdio_client_for(workspace) as client:
            envelope, text = await execute(client, {"code": DELETE_ONE})
            check_awaiting(workspace, envelope, text)
            run_id = envelope["runId"]

            denied = await capa_async(workspace, "hub", "deny", run_id, terminal=True)
            assert denied.returncode == 0, f"capa hub deny exited {denied.returncode}:\n{denied.stderr}"

            done, _ = await execute(client, {"resume": run_id})
            assert done["status"] == "failed", done
            assert done["error"]["code"] == "denied", done
            left, _ = await execute(client, {"code": "return await demo.list_notes({})"})
            assert left["result"] == ["doomed"], left

            caught, text = await execute(client, {"code": DELETE_CAUGHT})
            check_awaiting(workspace, caught, text)
            denied = await capa_async(workspace, "hub", "deny", caught["runId"], terminal=True)
            assert denied.returncode == 0, denied.stderr
            done, _ = await execute(client, {"resume": caught["runId"]})
            assert done["status"] == "completed", done
            assert done["result"] == DENIED_RESULT, done


async def test_cli_approve_always_writes_rule(tmp_path: Path) -> None:
    """`capa hub approve --always` (no `hub serve` runs: the CLI works on the DB) writes the allow
    rule; the run resumes, and a new hub session runs the tool without asking."""
    workspace = approvals_workspace(tmp_path / "ws")
    with anyio.fail_after(SESSION_TIMEOUT_S * 2):
        async with stdio_client_for(workspace) as client:
            envelope, text = await execute(client, {"code": DELETE_ONE})
            check_awaiting(workspace, envelope, text)
            approved = await capa_async(workspace, "hub", "approve", "--always", envelope["runId"], terminal=True)
            assert approved.returncode == 0, approved.stderr
            policy = (workspace.config_dir / "policy.yaml").read_text()
            assert re.search(r"match:\s*['\"]?demo\.delete_note['\"]?\s*$", policy, re.M), policy
            assert re.search(r"decision:\s*['\"]?allow['\"]?\s*$", policy, re.M), policy

            done, _ = await execute(client, {"resume": envelope["runId"]})
            assert done["status"] == "completed" and done["result"] == DELETE_ONE_RESULT, done
        async with stdio_client_for(workspace) as client:
            again, _ = await execute(client, {"code": DELETE_ONE})
            assert again["status"] == "completed" and again["result"] == DELETE_ONE_RESULT, again


async def test_cli_always_rule_reaches_the_running_stdio_hub(tmp_path: Path) -> None:
    """The rule `capa hub approve --always` writes applies to the next run of the `capa mcp` hub that
    is already running (always_allow: "a new run does not ask")."""
    workspace = approvals_workspace(tmp_path / "ws")
    with anyio.fail_after(SESSION_TIMEOUT_S * 2):
        async with stdio_client_for(workspace) as client:
            envelope, text = await execute(client, {"code": DELETE_ONE})
            check_awaiting(workspace, envelope, text)
            approved = await capa_async(workspace, "hub", "approve", "--always", envelope["runId"], terminal=True)
            assert approved.returncode == 0, approved.stderr
            done, _ = await execute(client, {"resume": envelope["runId"]})
            assert done["status"] == "completed", done
            again, _ = await execute(client, {"code": DELETE_ONE})
            assert again["status"] == "completed", f"the running hub still asks after --always: {again}"
            assert again["result"] == DELETE_ONE_RESULT, again


async def test_cli_always_through_running_http_hub(tmp_path: Path) -> None:
    """With `capa hub serve` running, the CLI decides through it: `--always` writes the rule, the
    run resumes, and the hub's next run does not ask."""
    workspace = approvals_workspace(tmp_path / "ws")
    hub = start_hub(workspace)
    try:
        with anyio.fail_after(SESSION_TIMEOUT_S * 2):
            async with http_client_for(hub) as client:
                envelope, text = await execute(client, {"code": DELETE_ONE})
                check_awaiting(workspace, envelope, text)
                listed = await anyio.to_thread.run_sync(cli_pending, workspace)
                assert [(p["runId"], p["address"]) for p in listed] == [(envelope["runId"], ADDRESS)], listed
                approved = await capa_async(workspace, "hub", "approve", "--always", envelope["runId"], terminal=True)
                assert approved.returncode == 0, f"{approved.stderr}\nhub log:\n{hub.log()}"
                policy = (workspace.config_dir / "policy.yaml").read_text()
                assert re.search(r"match:\s*['\"]?demo\.delete_note['\"]?\s*$", policy, re.M), policy

                done, _ = await execute(client, {"resume": envelope["runId"]})
                assert done["status"] == "completed" and done["result"] == DELETE_ONE_RESULT, done
                again, _ = await execute(client, {"code": DELETE_ONE})
                assert again["status"] == "completed", f"the hub still asks after --always: {again}"
                assert again["result"] == DELETE_ONE_RESULT, again
    finally:
        hub.stop()


# --------------------------------------------------------------------------------------------------
# Durability: a paused run survives SIGKILL of `capa hub serve`

# Random numbers come from the run's seed: a replay after the kill must draw the same ones, which
# `noteA` (written before the kill, read after it) checks.
DURABLE = """
const r1 = Math.random();
await demo.write_note({ title: "A", text: "r=" + r1 });
await demo.write_note({ title: "B", text: "to delete" });
const deleted = await demo.delete_note({ title: "B" });
const r2 = Math.random();
const noteA = await demo.read_note({ title: "A" });
const sum = await demo.add({ a: 2, b: 3 });
return { r1, r2, noteA, same: noteA === "r=" + r1, deleted, sum, left: await demo.list_notes({}) };
"""


def deterministic_part(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k not in ("r1", "r2", "noteA")}


async def test_paused_run_survives_sigkill(tmp_path: Path) -> None:
    # The same code, uninterrupted, with the tool allowed.
    baseline_ws = approvals_workspace(tmp_path / "baseline", allow_policy())
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(baseline_ws) as client:
            baseline, _ = await execute(client, {"code": DURABLE})
    assert baseline["status"] == "completed", baseline
    assert baseline["result"]["same"] is True, baseline
    assert baseline["result"]["left"] == ["A"], baseline

    workspace = approvals_workspace(tmp_path / "ws")
    hub = start_hub(workspace)
    try:
        with anyio.fail_after(SESSION_TIMEOUT_S):
            async with http_client_for(hub) as client:
                envelope, text = await execute(client, {"code": DURABLE})
        check_awaiting(workspace, envelope, text)
        run_id = envelope["runId"]
        kill_hard(hub.proc)
    finally:
        hub.stop()

    # A killed hub leaves its discovery file behind; start_hub waits for a new one.
    (workspace.data_dir / "hub.json").unlink(missing_ok=True)
    hub = start_hub(workspace)
    try:
        listed = await anyio.to_thread.run_sync(cli_pending, workspace)
        assert [(p["runId"], p["address"]) for p in listed] == [(run_id, ADDRESS)], listed
        approved = await capa_async(workspace, "hub", "approve", run_id, terminal=True)
        assert approved.returncode == 0, f"{approved.stderr}\nhub log:\n{hub.log()}"
        with anyio.fail_after(SESSION_TIMEOUT_S):
            async with http_client_for(hub) as client:
                done, _ = await execute(client, {"resume": run_id})
                assert done["status"] == "completed", f"{done}\nhub log:\n{hub.log()}"
                assert done["runId"] == run_id
                result = done["result"]
                assert result["same"] is True, f"the replay drew other random numbers: {result}"
                assert deterministic_part(result) == deterministic_part(baseline["result"]), (result, baseline)
                note_a, _ = await execute(client, {"code": 'return await demo.read_note({ title: "A" })'})
                assert note_a["result"] == result["noteA"], (note_a, result)
    finally:
        hub.stop()
