"""Approvals in code mode never show secret-named argument values: not in the form, the envelope,
the CLI's output or any file of the hub."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import anyio
import pytest

from conftest import (
    Answers,
    SESSION_TIMEOUT_S,
    Workspace,
    approvals_workspace,
    capa_async,
    check_awaiting,
    decide,
    execute,
    files_containing,
    pending_items,
    stdio_client_for,
)

pytestmark = pytest.mark.anyio


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
