"""A 2026-07-28 source that asks its client within the call (tests/fixtures/asking_server.py, the
Python SDK's resolvers), behind the hub in a direct profile, called by the Python SDK's
high-level Client (mcp 2.x) in both eras: on 2026-07-28 the source's rounds reach the client as
rounds of the hub's, which the SDK answers and retries; in the initialize era the hub asks on the
session. Either way the elicitation names the source and the call completes (docs/relay.md)."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp import types

from conftest import (
    REPO_ROOT,
    SESSION_TIMEOUT_S,
    http_client_for,
    make_workspace,
    start_hub,
    text_of,
)

pytestmark = pytest.mark.anyio

PYTHON = REPO_ROOT / "tests" / ".venv" / "bin" / "python"
ASKING = REPO_ROOT / "tests" / "fixtures" / "asking_server.py"


@pytest.fixture(scope="module")
def asking_hub(tmp_path_factory: pytest.TempPathFactory):
    workspace = make_workspace(tmp_path_factory.mktemp("rounds"), ())
    config = {
        "options": {"demo": False, "toolExposure": "code"},
        "servers": [{"id": "asking", "type": "mcp", "def": {"command": str(PYTHON), "args": [str(ASKING)]}}],
        "profiles": {"asking": {"toolExposure": "direct", "sources": ["asking"]}},
    }
    workspace.config_file.write_text(json.dumps(config) + "\n")
    hub = start_hub(workspace)
    try:
        yield hub
    finally:
        hub.stop()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_sources_questions_reach_the_client_of_the_call(asking_hub, mode: str) -> None:
    asked: list[str] = []

    async def answer(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        fields = set(params.requested_schema.get("properties", {}))
        content = {"dish": "soup"} if "dish" in fields else {"name": "Kim", "size": 3}
        return types.ElicitResult(action="accept", content=content)

    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with http_client_for(
            asking_hub, mode=mode, path="/mcp/asking", elicitation_callback=answer
        ) as client:
            booked = await client.call_tool("asking.book_table", {})
            assert not booked.is_error, booked
            assert text_of(booked) == "booked a table for 3, name Kim"
            dinner = await client.call_tool("asking.order_dinner", {})
            assert text_of(dinner) == "Kim (3) eats soup", dinner
    assert asked[0] == "asking asks: Whose table, and for how many?", asked
    assert "asking asks: What will Kim eat?" in asked, asked


async def test_a_client_without_elicitation_is_not_asked(asking_hub) -> None:
    """The source is told this client cannot answer, and refuses the call rather than ask; its
    -32021 reaches the client as that error, naming what is missing."""
    from mcp.shared.exceptions import MCPError

    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with http_client_for(asking_hub, mode="auto", path="/mcp/asking") as client:
            with pytest.raises(MCPError) as refused:
                await client.call_tool("asking.book_table", {})
    assert refused.value.code == -32021, refused.value
    assert "elicitation" in refused.value.data["requiredCapabilities"], refused.value.data
