"""Skills over MCP with the Python SDK's high-level Client (docs/skills.md): a skill written as
`skills/<name>/SKILL.md` beside the capabilities file is a resource of `capa hub serve`, listed
with its description and read back byte for byte; an unknown skill URI is refused with -32602."""

from __future__ import annotations

import anyio
import pytest

from conftest import SESSION_TIMEOUT_S, Workspace, http_client_for, make_workspace, start_hub

pytestmark = pytest.mark.anyio

URI = "skill://release-notes/SKILL.md"
SKILL_MD = """---
name: release-notes
description: "Draft release notes: \\"what's new\\", fixes, and C:\\\\paths kept as written."
metadata:
  requires: "@demo"
---

Read the notes with `demo.list_notes`, then write the release notes in three sections.
"""


def workspace_with_skill(root) -> Workspace:
    workspace = make_workspace(root, upstreams=())
    folder = workspace.root / "skills" / "release-notes"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD)
    return workspace


async def test_a_skill_is_a_resource_read_back_as_written(tmp_path) -> None:
    from mcp import MCPError

    hub = start_hub(workspace_with_skill(tmp_path / "skills"))
    try:
        with anyio.fail_after(SESSION_TIMEOUT_S):
            async with http_client_for(hub) as client:
                listed = await client.list_resources()
                by_uri = {str(r.uri): r for r in listed.resources}
                assert URI in by_uri, by_uri
                assert by_uri[URI].mime_type == "text/markdown"
                assert by_uri[URI].description == 'Draft release notes: "what\'s new", fixes, and C:\\paths kept as written.'
                read = await client.read_resource(URI)
                assert read.contents[0].text == SKILL_MD
                with pytest.raises(MCPError) as refused:
                    await client.read_resource("skill://nope/SKILL.md")
                assert refused.value.error.code == -32602
    finally:
        hub.stop()
