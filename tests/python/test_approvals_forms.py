"""Approvals in code mode for a 2026-07-28 client with form elicitation (the Python SDK's `Client`,
`mcp` 2.x): the tools/call answers `input_required`, the SDK asks the `elicitation_callback` and
retries, and the run resumes within the same call. Each choice of the form is checked: once, for
the run, always (a policy rule), deny (a `denied` ToolError in the guest)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import types

from conftest import (
    ADDRESS,
    Answers,
    DELETE_CAUGHT,
    DELETE_ONE,
    DELETE_ONE_RESULT,
    DELETE_TWO,
    DELETE_TWO_RESULT,
    DENIED_RESULT,
    MODERN_VERSION,
    SESSION_TIMEOUT_S,
    approvals_workspace,
    capa_async,
    check_form,
    cli_pending,
    decide,
    execute,
    pending_items,
    stdio_client_for,
)

pytestmark = pytest.mark.anyio


async def test_approve_once_asks_again_next_run(tmp_path: Path) -> None:
    workspace = approvals_workspace(tmp_path / "ws")
    answers = Answers(decide("approve_once"), decide("approve_once"))
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(workspace, elicitation_callback=answers) as client:
            assert client.protocol_version == MODERN_VERSION
            envelope, _ = await execute(client, {"code": DELETE_ONE})
            assert envelope["status"] == "completed", envelope
            assert envelope["result"] == DELETE_ONE_RESULT, envelope
            assert [(c["address"], c["ok"]) for c in envelope["calls"]] == [
                ("demo.write_note", True),
                (ADDRESS, True),
                ("demo.list_notes", True),
            ], envelope
            assert len(answers.asked) == 1
            check_form(answers.asked[0])

            again, _ = await execute(client, {"code": DELETE_ONE})
            assert again["status"] == "completed", again
            assert again["result"] == DELETE_ONE_RESULT, again
            assert again["runId"] != envelope["runId"]
            assert len(answers.asked) == 2, "approve_once must not carry over to a new run"


async def test_approve_run_asks_once_per_run(tmp_path: Path) -> None:
    workspace = approvals_workspace(tmp_path / "ws")
    answers = Answers(decide("approve_run"), decide("approve_run"))
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(workspace, elicitation_callback=answers) as client:
            envelope, _ = await execute(client, {"code": DELETE_TWO})
            assert envelope["status"] == "completed", envelope
            assert envelope["result"] == DELETE_TWO_RESULT, envelope
            assert len(answers.asked) == 1, [p.message for p in answers.asked]
            check_form(answers.asked[0], title="a")

            # The grant is for that run only.
            again, _ = await execute(client, {"code": DELETE_TWO})
            assert again["status"] == "completed", again
            assert len(answers.asked) == 2


async def test_always_allow_from_a_form_writes_the_rule_held_until_a_person_confirms(
    tmp_path: Path,
) -> None:
    """Issue 39: a form's "Always allow" approves this call; the rule it writes waits for a
    person (`capa policy confirm`), so the next run asks again."""
    workspace = approvals_workspace(tmp_path / "ws")
    answers = Answers(decide("always_allow"), decide("approve_once"))
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(workspace, elicitation_callback=answers) as client:
            envelope, _ = await execute(client, {"code": DELETE_ONE})
            assert envelope["status"] == "completed", envelope
            assert envelope["result"] == DELETE_ONE_RESULT, envelope
            assert len(answers.asked) == 1

            policy_file = workspace.config_dir / "policy.yaml"
            assert policy_file.exists(), "always_allow wrote no policy.yaml"
            policy = policy_file.read_text()
            assert re.search(r"match:\s*['\"]?demo\.delete_note['\"]?\s*$", policy, re.M), policy
            assert re.search(r"decision:\s*['\"]?allow['\"]?\s*$", policy, re.M), policy

            again, _ = await execute(client, {"code": DELETE_ONE})
            assert again["status"] == "completed", again
            assert again["result"] == DELETE_ONE_RESULT, again
            assert len(answers.asked) == 2, "a form's always_allow took effect without a person"


@pytest.mark.parametrize(
    "reply", [decide("deny"), ("decline", None)], ids=["deny", "decline"]
)
async def test_deny_throws_denied_in_guest(tmp_path: Path, reply: tuple[str, Any]) -> None:
    workspace = approvals_workspace(tmp_path / "ws")
    answers = Answers(reply, reply)
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(workspace, elicitation_callback=answers) as client:
            caught, _ = await execute(client, {"code": DELETE_CAUGHT})
            assert caught["status"] == "completed", caught
            assert caught["result"] == DENIED_RESULT, caught
            assert len(answers.asked) == 1

            uncaught, _ = await execute(client, {"code": DELETE_ONE})
            assert uncaught["status"] == "failed", uncaught
            assert uncaught["error"]["code"] == "denied", uncaught
            assert len(answers.asked) == 2


async def test_policy_file_makes_a_tool_ask(tmp_path: Path) -> None:
    policy = "rules:\n  - match: demo.write_note\n    decision: ask\n"
    workspace = approvals_workspace(tmp_path / "ws", policy)
    answers = Answers(decide("approve_once"))
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(workspace, elicitation_callback=answers) as client:
            envelope, _ = await execute(
                client, {"code": 'return await demo.write_note({ title: "kept", text: "hi" })'}
            )
            assert envelope["status"] == "completed", envelope
            assert envelope["result"] == 'saved note "kept"', envelope
            assert len(answers.asked) == 1
            assert "demo.write_note" in answers.asked[0].message
            # Other demo tools stay allowed.
            plain, _ = await execute(client, {"code": "return await demo.add({ a: 2, b: 3 })"})
            assert plain["status"] == "completed" and plain["result"] == 5, plain
            assert len(answers.asked) == 1


async def test_elicitation_form_matches_pending_record(tmp_path: Path) -> None:
    """While the form is open, `capa hub pending --json` (on the DB; no `hub serve` runs) lists the
    same approval, and the form's message carries its reason."""
    workspace = approvals_workspace(tmp_path / "ws")
    seen: dict[str, Any] = {}

    async def callback(context: Any, params: Any) -> types.ElicitResult:
        seen["params"] = params
        seen["pending"] = await capa_async(workspace, "hub", "pending", "--json")
        return types.ElicitResult(action="accept", content={"decision": "deny"})

    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(workspace, elicitation_callback=callback) as client:
            envelope, _ = await execute(client, {"code": DELETE_CAUGHT})
    assert envelope["status"] == "completed" and envelope["result"] == DENIED_RESULT, envelope
    done = seen["pending"]
    assert done.returncode == 0, done.stderr
    items = pending_items(done.stdout)
    assert len(items) == 1, items
    item = items[0]
    assert item["address"] == ADDRESS and item["runId"] == envelope["runId"], item
    assert item["preview"] == {"title": "doomed"}, item
    assert item["reason"] and item["reason"] in seen["params"].message, (item, seen["params"].message)
    assert cli_pending(workspace) == [], "a decided approval is still listed"
