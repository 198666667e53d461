"""Fixtures for the Python client tests: the real hub binary, real upstream MCP servers, and the
official Python SDK (`mcp` 2.x) high-level `Client`.

Every test gets fresh temp dirs (CAPA_DATA_DIR, CAPA_CONFIG_DIR and a directory served by the
filesystem server); nothing touches the user's own hub, config or keychain.

Binary: $CAPA_BIN, default <repo>/target/debug/capa (build it with `cargo build`).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import time
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import anyio
import pytest
from mcp import types
from pairing import pair_client

REPO_ROOT = Path(__file__).resolve().parents[2]
CAPA_BIN = Path(os.environ.get("CAPA_BIN") or REPO_ROOT / "target" / "debug" / "capa")
if not CAPA_BIN.is_absolute():
    CAPA_BIN = (REPO_ROOT / CAPA_BIN).resolve()
TIME_SERVER = REPO_ROOT / "tests" / ".venv" / "bin" / "mcp-server-time"
NODE_MODULES = REPO_ROOT / "node_modules"
EVERYTHING_JS = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
FILESYSTEM_JS = NODE_MODULES / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"

# The file every test can read through the filesystem source.
HELLO_NAME = "hello.txt"
HELLO_TEXT = "Hello from the capabilities Python tests.\nSecond line.\n"

# How long the hub may take to write hub.json, and to stop after SIGTERM.
HUB_START_TIMEOUT_S = 30.0
HUB_STOP_TIMEOUT_S = 10.0
# Upper bound for any single client session in a test (spawn + upstream start + calls).
SESSION_TIMEOUT_S = 40.0

MODERN_VERSION = "2026-07-28"
LEGACY_VERSION = "2025-11-25"

NAMESPACES = ("demo", "everything", "filesystem", "time")


def pytest_sessionstart(session: pytest.Session) -> None:
    missing = [p for p in (CAPA_BIN, TIME_SERVER, EVERYTHING_JS, FILESYSTEM_JS) if not p.exists()]
    if missing:
        hint = "run `cargo build` (or set CAPA_BIN)" if CAPA_BIN in missing else "install the test dependencies"
        raise pytest.UsageError(f"missing {', '.join(map(str, missing))}: {hint}")


# No test here skips on purpose. Under scripts/test (CAPA_REQUIRE_ALL=1) any skip that creeps in,
# a `pytest.skip`, a `skipif` or a plugin's, is a failure with its reason, so a run that checked
# nothing cannot be green; run by hand, a skip stays a skip.
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get("CAPA_REQUIRE_ALL") and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped under CAPA_REQUIRE_ALL, which makes a skip a failure: {reason}"


# --------------------------------------------------------------------------------------------------
# anyio: the SDK is anyio-based; its pytest plugin (shipped with anyio) runs `@pytest.mark.anyio`
# tests. Only asyncio is installed, so do not parametrize over trio.


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


# --------------------------------------------------------------------------------------------------
# Temp dirs, config, environment


@dataclass
class Workspace:
    root: Path
    data_dir: Path
    config_dir: Path
    files_dir: Path
    config_file: Path
    env: dict[str, str]
    hello_path: Path = field(init=False)

    def __post_init__(self) -> None:
        self.hello_path = self.files_dir / HELLO_NAME


UPSTREAMS = ("time", "everything", "filesystem")


def write_config(path: Path, files_dir: Path, upstreams: tuple[str, ...] = UPSTREAMS) -> None:
    """A capabilities file with the demo source plus the named upstream servers."""
    defs = {
        "time": {"command": str(TIME_SERVER)},
        "everything": {"command": "node", "args": [str(EVERYTHING_JS), "stdio"]},
        "filesystem": {"command": "node", "args": [str(FILESYSTEM_JS), str(files_dir)]},
    }
    servers = [{"id": name, "type": "mcp", "def": defs[name]} for name in upstreams]
    # JSON is YAML; json.dumps quotes paths safely.
    path.write_text(json.dumps({"servers": servers, "options": {"demo": True}}, indent=2) + "\n")


def make_workspace(root: Path, upstreams: tuple[str, ...] = UPSTREAMS) -> Workspace:
    """Fresh data, config and files dirs (with hello.txt) and a capabilities file under `root`."""
    root.mkdir(parents=True, exist_ok=True)
    data_dir, config_dir, files_dir = root / "data", root / "config", root / "files"
    for d in (data_dir, config_dir, files_dir):
        d.mkdir()
    # The filesystem server resolves symlinks; use the real path so tool arguments match.
    files_dir = files_dir.resolve()
    (files_dir / HELLO_NAME).write_text(HELLO_TEXT)
    config_file = root / "capabilities.yaml"
    write_config(config_file, files_dir, upstreams)
    env = dict(os.environ)
    env.update(CAPA_DATA_DIR=str(data_dir), CAPA_CONFIG_DIR=str(config_dir))
    return Workspace(root, data_dir, config_dir, files_dir, config_file, env)


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    """Fresh dirs and a capabilities file with all four sources (demo, time, everything, filesystem)."""
    return make_workspace(tmp_path / "ws")


@pytest.fixture
def workspace_with(tmp_path: Path) -> Callable[..., Workspace]:
    """Fresh dirs and a capabilities file with demo plus only the named upstreams (faster start)."""

    def make(*upstreams: str) -> Workspace:
        return make_workspace(tmp_path / ("ws-" + "-".join(upstreams or ("demo",))), tuple(upstreams))

    return make


# --------------------------------------------------------------------------------------------------
# Processes


def process_table() -> list[tuple[int, int, str]]:
    """(pid, ppid, command line) of every process, read from /proc (no `ps` width limits)."""
    rows = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(") ", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                args = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, IndexError, ValueError):
            continue
        rows.append((int(entry), ppid, args))
    return rows


def descendants(pid: int) -> list[tuple[int, str]]:
    table = process_table()
    found, queue = [], [pid]
    while queue:
        parent = queue.pop()
        for child, ppid, args in table:
            if ppid == parent:
                found.append((child, args))
                queue.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie still answers kill(0); treat it as gone.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][:1] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def wait_gone(pids: list[int], timeout: float) -> list[int]:
    deadline = time.monotonic() + timeout
    while True:
        left = [p for p in pids if alive(p)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def processes_mentioning(text: str) -> list[tuple[int, str]]:
    me = os.getpid()
    return [(pid, args) for pid, _ppid, args in process_table() if text in args and pid != me and alive(pid)]


@dataclass
class RunningHub:
    """`capa hub serve` on a free loopback port."""

    workspace: Workspace
    proc: subprocess.Popen[bytes]
    url: str
    token: str
    stderr_path: Path

    @property
    def mcp_url(self) -> str:
        return f"{self.url}/mcp"

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def log(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def api(self, path: str) -> Any:
        request = urllib.request.Request(self.url + path, headers={"Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(request, timeout=5) as response:
            return json.load(response)

    def wait_sources_ready(self, deadline: float) -> None:
        sources: Any = None
        while time.monotonic() < deadline:
            sources = self.api("/api/sources")
            if sources and all(s.get("state") == "ready" for s in sources):
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"sources of the hub not ready: {sources}\n{self.log()}")

    def stop(self) -> int:
        """SIGTERM, then SIGKILL after HUB_STOP_TIMEOUT_S; also reaps leftover upstream children."""
        children = [pid for pid, _ in descendants(self.proc.pid)] if self.proc.poll() is None else []
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(HUB_STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        for pid in wait_gone(children, 5.0):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return self.proc.returncode


def start_hub(workspace: Workspace, *, wait_ready: bool = True) -> RunningHub:
    """Starts `capa hub serve` and waits for hub.json; with `wait_ready`, also until every source
    is ready. (`hub serve` writes hub.json before its sources have connected, so a tools/list
    right after start can miss tools; `capa mcp` waits for its sources, `hub serve` does not.)"""
    discovery = workspace.data_dir / "hub.json"
    stderr_path = workspace.root / "hub.stderr.log"
    with open(stderr_path, "wb") as err:
        proc = subprocess.Popen(
            [str(CAPA_BIN), "--config", str(workspace.config_file), "hub", "serve", "--http", "127.0.0.1:0"],
            env=workspace.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    deadline = time.monotonic() + HUB_START_TIMEOUT_S
    info: dict[str, Any] | None = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"hub exited with {proc.returncode} before listening:\n{stderr_path.read_text()}")
        try:
            info = json.loads(discovery.read_text())
            if info.get("url"):
                break
        except (FileNotFoundError, json.JSONDecodeError):
            pass
        time.sleep(0.05)
    else:
        proc.kill()
        proc.wait()
        raise RuntimeError(f"hub wrote no {discovery} within {HUB_START_TIMEOUT_S}s:\n{stderr_path.read_text()}")
    assert info is not None
    token = (workspace.data_dir / "token").read_text().strip()
    hub = RunningHub(workspace, proc, info["url"].rstrip("/"), token, stderr_path)
    if wait_ready:
        hub.wait_sources_ready(deadline)
    return hub


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningHub]:
    """One hub per test module, with all four sources, stopped with SIGTERM afterwards."""
    running = start_hub(make_workspace(tmp_path_factory.mktemp("hub")))
    try:
        yield running
    finally:
        running.stop()


# --------------------------------------------------------------------------------------------------
# Clients


@asynccontextmanager
async def stdio_client_for(
    workspace: Workspace,
    *,
    mode: str = "auto",
    errlog: IO[str] | None = None,
    elicitation_callback: Any = None,
    paired: bool | None = None,
) -> AsyncIterator[Any]:
    """`capa --config FILE mcp` as a stdio child of the SDK's high-level Client. With an
    `elicitation_callback` the client declares form elicitation (the SDK's own rule), and is
    paired first (`paired`, default: when it declares forms), since only a paired client's
    forms answer approvals (docs/security.md, "Who may say yes")."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = dict(workspace.env)
    if paired if paired is not None else elicitation_callback is not None:
        env["CAPA_CLIENT_KEY"] = pair_client(capa, workspace)["key"]
    params = StdioServerParameters(
        command=str(CAPA_BIN),
        args=["--config", str(workspace.config_file), "mcp"],
        # The SDK passes only a small safe set of variables by default; the hub needs its dirs.
        env=env,
        cwd=str(workspace.root),
    )
    log_path = workspace.root / "capa-mcp.stderr.log"
    own_log = errlog is None
    log = open(log_path, "a") if own_log else errlog
    try:
        async with Client(
            stdio_client(params, errlog=log), mode=mode, elicitation_callback=elicitation_callback
        ) as client:
            yield client
    finally:
        if own_log:
            log.close()


@asynccontextmanager
async def http_client_for(
    hub: RunningHub,
    *,
    mode: str = "auto",
    token: str | None = "hub",
    elicitation_callback: Any = None,
    path: str = "/mcp",
    **client_options: Any,
) -> AsyncIterator[Any]:
    """The SDK's Client over Streamable HTTP at `path` (a profile's is `/mcp/<name>`), sending
    `Authorization: Bearer <token>`; `client_options` go to the Client (`sampling_callback`,
    `logging_callback`, …)."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {}
    if token is not None:
        headers["Authorization"] = f"Bearer {hub.token if token == 'hub' else token}"
    async with create_mcp_http_client(headers=headers) as http:
        async with Client(
            streamable_http_client(f"{hub.url}{path}", http_client=http),
            mode=mode,
            elicitation_callback=elicitation_callback,
            **client_options,
        ) as client:
            yield client


def leaf_exceptions(exc: BaseException) -> list[BaseException]:
    """The non-group exceptions inside (possibly nested) exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in leaf_exceptions(sub)]
    return [exc]


def text_of(result: Any) -> str:
    """Concatenated text content of a CallToolResult."""
    return "".join(getattr(block, "text", "") for block in result.content)


# --------------------------------------------------------------------------------------------------
# Approvals in code mode (test_approvals_*.py, test_runs_survive.py): `demo.delete_note` asks a
# person; these run its code, answer its forms and drive the CLI that decides.


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
