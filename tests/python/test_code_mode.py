"""Code mode (`toolExposure: code`) with the Python SDK's Client over `capa mcp`, negotiating
2026-07-28: `search` finds GitHub's create_issue among 1,400 tools and `describe` declares it.
The catalogs are served by the catalog fixture server (tests/fixtures/catalog-server.mjs)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from conftest import MODERN_VERSION, NODE_MODULES, REPO_ROOT, SESSION_TIMEOUT_S, Workspace, make_workspace, stdio_client_for, text_of
from mcp_checks import call_and_keep, raise_if_error

pytestmark = pytest.mark.anyio

CATALOG_SERVER = REPO_ROOT / "tests" / "fixtures" / "catalog-server.mjs"
NODE = NODE_MODULES / ".bin" / "node"


def code_workspace(root: Path) -> Workspace:
    workspace = make_workspace(root, ())
    servers = [
        {"id": source, "type": "mcp", "def": {"command": str(NODE), "args": [str(CATALOG_SERVER), catalog]}}
        for source, catalog in (("github", "github"), ("registry", "docker-registry"), ("live", "livemcpbench"))
    ]
    options = {"demo": False, "toolExposure": "code"}
    workspace.config_file.write_text(json.dumps({"servers": servers, "options": options}, indent=2) + "\n")
    return workspace


async def test_search_and_describe_in_code_mode(tmp_path: Path) -> None:
    workspace = code_workspace(tmp_path / "code")
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(workspace) as client:
            assert client.protocol_version == MODERN_VERSION
            tools = (await client.list_tools()).tools
            assert [t.name for t in tools] == ["search", "describe", "execute"]

            found = raise_if_error(await call_and_keep(client, "search", {"query": "open a bug report on a repo"}))
            assert not found.is_error, text_of(found)
            first_tool = next(line for line in text_of(found).splitlines() if line.startswith("  "))
            assert first_tool.startswith("  github.create_issue(input: {"), text_of(found)

            declared = raise_if_error(await call_and_keep(client, "describe", {"targets": ["github.create_issue"]}))
            assert not declared.is_error, text_of(declared)
            assert "declare const github: {" in text_of(declared)
            assert "options?: CallOptions" in text_of(declared)

            ran = raise_if_error(await call_and_keep(client, "execute", {"code": "return [1, 2].map((x: number) => x * 21)"}))
            assert not ran.is_error, text_of(ran)
            assert ran.structured_content["status"] == "completed", ran.structured_content
            assert ran.structured_content["result"] == [21, 42]

            refused = raise_if_error(await call_and_keep(client, "search", {"query": "x" * 201}))
            assert refused.is_error
            assert "200" in text_of(refused)
