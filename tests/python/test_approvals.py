"""Approvals in code mode, end to end with the Python SDK's Client (`mcp` 2.x).

`demo.delete_note` is destructive, so by default a call to it asks a person. What the client gets
depends on what it declared:

- with an `elicitation_callback` (2026-07-28, form elicitation): the tools/call answers
  `input_required`; the SDK asks the callback and retries; the run resumes within the same call;
- without: the envelope says `awaiting_approval`; a person decides with `capa hub approve|deny`,
  and `execute({resume})` continues the run.

Also: a paused run survives SIGKILL of the hub, and secret-named argument values never show.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import signal
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import types

from conftest import (
    CAPA_BIN,
    MODERN_VERSION,
    SESSION_TIMEOUT_S,
    Workspace,
    descendants,
    http_client_for,
    make_workspace,
    start_hub,
    stdio_client_for,
    text_of,
    wait_gone,
)

pytestmark = pytest.mark.anyio

ADDRESS = "demo.delete_note"
DECISIONS = {
    "approve_once": "Approve once",
    "approve_run": "Approve for the rest of this run",
    "always_allow": f"Always allow {ADDRESS}",
    "deny": "Deny",
}

# Writes a note (allowed) and deletes it (asks).
DELETE_ONE = """
await demo.write_note({ title: "doomed", text: "bye" });
const deleted = await demo.delete_note({ title: "doomed" });
return { deleted, left: await demo.list_notes({}) };
"""
DELETE_ONE_RESULT = {"deleted": 'deleted note "doomed"', "left": []}

# Deletes two notes: with approve_run, only the first delete asks.
DELETE_TWO = """
await demo.write_note({ title: "a", text: "1" });
await demo.write_note({ title: "b", text: "2" });
const x = await demo.delete_note({ title: "a" });
const y = await demo.delete_note({ title: "b" });
return { x, y, left: await demo.list_notes({}) };
"""
DELETE_TWO_RESULT = {"x": 'deleted note "a"', "y": 'deleted note "b"', "left": []}

# A denied call throws a ToolError with code "denied" inside the guest.
DELETE_CAUGHT = """
await demo.write_note({ title: "doomed", text: "bye" });
try {
  await demo.delete_note({ title: "doomed" });
  return { ran: true };
} catch (e) {
  return { code: e.code, isToolError: e instanceof ToolError, left: await demo.list_notes({}) };
}
"""
DENIED_RESULT = {"code": "denied", "isToolError": True, "left": ["doomed"]}


# --------------------------------------------------------------------------------------------------
# Helpers


def approvals_workspace(root: Path, policy: str | None = None) -> Workspace:
    """Demo only, code mode; CAPA_NO_BROWSER so an HTTP hub never opens an approval page."""
    workspace = make_workspace(root, ())
    options = {"demo": True, "toolExposure": "code"}
    workspace.config_file.write_text(json.dumps({"servers": [], "options": options}, indent=2) + "\n")
    workspace.env["CAPA_NO_BROWSER"] = "1"
    if policy is not None:
        (workspace.config_dir / "policy.yaml").write_text(policy)
    return workspace


def allow_policy(address: str = ADDRESS) -> str:
    return f"rules:\n  - match: {address}\n    decision: allow\n"


class Answers:
    """An elicitation callback that answers each form with the next scripted reply and keeps what
    it was asked."""

    def __init__(self, *replies: tuple[str, dict[str, Any] | None]) -> None:
        self.replies = list(replies)
        self.asked: list[Any] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.asked.append(params)
        if not self.replies:
            raise AssertionError(f"asked more often than expected; last form: {params!r}")
        action, content = self.replies.pop(0)
        return types.ElicitResult(action=action, content=content)


def decide(decision: str) -> tuple[str, dict[str, Any]]:
    return ("accept", {"decision": decision})


async def execute(client: Any, arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
    result = await client.call_tool("execute", arguments)
    assert result.structured_content is not None, f"no envelope: {text_of(result)}"
    return result.structured_content, text_of(result)


def capa(
    workspace: Workspace, *args: str, timeout: float = 30.0, terminal: bool = False
) -> subprocess.CompletedProcess[str]:
    """Runs the CLI with the hub's dirs (it finds a running hub for that data dir, or the DB).

    `terminal`: as a person at a terminal (util-linux `script` gives it a pseudo-terminal);
    decisions are refused without one, since an agent's shell has none.
    """
    command = [str(CAPA_BIN), "--config", str(workspace.config_file), *args]
    if terminal:
        command = ["script", "-qec", shlex.join(command), "/dev/null"]
    return subprocess.run(
        command,
        env=workspace.env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


async def capa_async(
    workspace: Workspace, *args: str, terminal: bool = False
) -> subprocess.CompletedProcess[str]:
    return await anyio.to_thread.run_sync(lambda: capa(workspace, *args, terminal=terminal))


def pending_items(output: str) -> list[dict[str, Any]]:
    """The items of `capa hub pending --json`: a list, or an object holding one list."""
    data = json.loads(output)
    if isinstance(data, dict):
        lists = [v for v in data.values() if isinstance(v, list)]
        assert len(lists) == 1, f"`hub pending --json` is an object without exactly one list: {output}"
        data = lists[0]
    assert isinstance(data, list), output
    return data


def cli_pending(workspace: Workspace) -> list[dict[str, Any]]:
    done = capa(workspace, "hub", "pending", "--json")
    assert done.returncode == 0, f"capa hub pending --json exited {done.returncode}:\n{done.stderr}"
    return pending_items(done.stdout)


def schema_choices(schema: dict[str, Any]) -> dict[str, str]:
    """value -> title of the `decision` property (titled `oneOf` consts, or `enum` + `enumNames`)."""
    decision = schema["properties"]["decision"]
    assert decision.get("type") == "string", decision
    if "oneOf" in decision:
        return {c["const"]: c.get("title") for c in decision["oneOf"]}
    return dict(zip(decision["enum"], decision.get("enumNames") or [None] * len(decision["enum"])))


def check_form(params: Any, title: str = "doomed") -> None:
    assert getattr(params, "mode", "form") in (None, "form"), params
    message = params.message
    assert ADDRESS in message, message
    # A JSON preview of the arguments (values the model wrote into plain fields are shown).
    assert '"title"' in message and f'"{title}"' in message, message
    schema = params.requested_schema
    assert set(schema["properties"]) == {"decision"}, schema
    assert schema.get("required") == ["decision"], schema
    assert schema_choices(schema) == DECISIONS, schema


def assert_no_url_or_token(workspace: Workspace, *texts: str) -> None:
    token_file = workspace.data_dir / "token"
    token = token_file.read_text().strip() if token_file.exists() else None
    for text in texts:
        assert not re.search(r"https?://", text), f"a URL was handed to the model: {text}"
        if token:
            assert token not in text, f"the hub's token was handed to the model: {text}"


def files_containing(directory: Path, needle: str) -> list[str]:
    forms = (needle.encode(), needle.encode("utf-16-le"))
    found = []
    for path in directory.rglob("*"):
        if path.is_file() and any(form in path.read_bytes() for form in forms):
            found.append(str(path.relative_to(directory)))
    return found


def kill_hard(proc: subprocess.Popen[bytes]) -> None:
    children = [pid for pid, _ in descendants(proc.pid)]
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    for pid in wait_gone(children, 2.0):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


# --------------------------------------------------------------------------------------------------
# 2026-07-28 client with form elicitation


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


async def test_always_allow_writes_policy_rule(tmp_path: Path) -> None:
    workspace = approvals_workspace(tmp_path / "ws")
    answers = Answers(decide("always_allow"))
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
            assert len(answers.asked) == 1, "an always-allowed tool asked again"


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


# --------------------------------------------------------------------------------------------------
# A client without elicitation: awaiting_approval, then the CLI, then resume


def check_awaiting(workspace: Workspace, envelope: dict[str, Any], text: str) -> dict[str, Any]:
    assert envelope["status"] == "awaiting_approval", envelope
    assert re.fullmatch(r"run_[0-9a-f]{16}", envelope["runId"]), envelope
    pending = envelope["pending"]
    assert len(pending) == 1, pending
    item = pending[0]
    assert item["kind"] == "approval" and item["address"] == ADDRESS, item
    assert item["id"] and isinstance(item["summary"], str) and item["summary"], item
    assert isinstance(item["message"], str) and item["message"], item
    assert_no_url_or_token(workspace, text, json.dumps(envelope))
    return item


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


# --------------------------------------------------------------------------------------------------
# Redaction: secret-named argument values never show


def canary_code(canary: str) -> str:
    """The canary is assembled at run time, so the code text (stored for replay) never holds it."""
    head, tail = canary[: len(canary) // 2], canary[len(canary) // 2 :]
    return f"""
const canary = {json.dumps(head)} + {json.dumps(tail)};
await demo.write_note({{ title: "doomed", text: "bye" }});
try {{
  return await demo.delete_note({{
    title: "doomed",
    token: canary,
    password: canary,
    apiKey: canary,
    headers: {{ Authorization: "Bearer " + canary }},
  }});
}} catch (e) {{
  return e.code;
}}
"""


def check_no_canary(workspace: Workspace, canary: str, where: str, *texts: str) -> None:
    for text in texts:
        assert canary not in text, f"the canary leaked into {where}: {text}"
    assert files_containing(workspace.data_dir, canary) == [], f"data files with the canary ({where})"
    assert files_containing(workspace.config_dir, canary) == [], f"config files with the canary ({where})"


async def test_redaction_canary_in_elicitation(tmp_path: Path) -> None:
    canary = f"cnry{secrets.token_hex(12)}"
    workspace = approvals_workspace(tmp_path / "ws")
    answers = Answers(decide("approve_once"))
    log = workspace.root / "capa-mcp.stderr.log"
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(workspace, elicitation_callback=answers) as client:
            envelope, text = await execute(client, {"code": canary_code(canary)})
            assert envelope["status"] == "completed", envelope
            assert envelope["result"] == 'deleted note "doomed"', envelope
            assert len(answers.asked) == 1
            message = answers.asked[0].message
            assert '"doomed"' in message, message
            assert "[redacted]" in message, message
            check_no_canary(workspace, canary, "the run", message, text, json.dumps(envelope))
    check_no_canary(workspace, canary, "the hub's files after exit", log.read_text(errors="replace"))


async def test_redaction_canary_awaiting_and_cli(tmp_path: Path) -> None:
    canary = f"cnry{secrets.token_hex(12)}"
    workspace = approvals_workspace(tmp_path / "ws")
    log = workspace.root / "capa-mcp.stderr.log"
    with anyio.fail_after(SESSION_TIMEOUT_S * 2):
        async with stdio_client_for(workspace) as client:
            envelope, text = await execute(client, {"code": canary_code(canary)})
            check_awaiting(workspace, envelope, text)
            run_id = envelope["runId"]
            pending = await capa_async(workspace, "hub", "pending", "--json")
            assert pending.returncode == 0, pending.stderr
            listed = pending_items(pending.stdout)
            assert listed[0]["preview"]["title"] == "doomed", listed
            assert listed[0]["preview"]["token"] != canary, listed
            check_no_canary(workspace, canary, "the paused run", text, json.dumps(envelope), pending.stdout, pending.stderr)

            approved = await capa_async(workspace, "hub", "approve", run_id, terminal=True)
            assert approved.returncode == 0, approved.stderr
            done, done_text = await execute(client, {"resume": run_id})
            assert done["status"] == "completed", done
            assert done["result"] == 'deleted note "doomed"', done
            check_no_canary(
                workspace, canary, "the resumed run", done_text, json.dumps(done), approved.stdout, approved.stderr
            )
    check_no_canary(workspace, canary, "the hub's files after exit", log.read_text(errors="replace"))


async def test_redaction_canary_denied_run(tmp_path: Path) -> None:
    """A denied call is journaled as refused; its secret-named values must not be stored either."""
    canary = f"cnry{secrets.token_hex(12)}"
    workspace = approvals_workspace(tmp_path / "ws")
    answers = Answers(decide("deny"))
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(workspace, elicitation_callback=answers) as client:
            envelope, text = await execute(client, {"code": canary_code(canary)})
            assert envelope["status"] == "completed" and envelope["result"] == "denied", envelope
            check_no_canary(workspace, canary, "the denied run", answers.asked[0].message, text, json.dumps(envelope))
