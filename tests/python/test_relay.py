"""The sources' prompts and resources through the hub (docs/relay.md), with the Python SDK's
high-level Client over Streamable HTTP and stdio: server-everything's prompts under its
namespace, got with their arguments; its resources read, directly and through a template; an
unknown URI refused with -32602 and the URI."""

from __future__ import annotations

import anyio
import pytest

from conftest import SESSION_TIMEOUT_S, http_client_for, stdio_client_for

pytestmark = pytest.mark.anyio


async def check_relay(client) -> None:
    from mcp import MCPError

    prompts = {p.name: p for p in (await client.list_prompts()).prompts}
    assert "everything.simple-prompt" in prompts, sorted(prompts)
    got = await client.get_prompt("everything.args-prompt", {"city": "Nantes"})
    assert got.messages[0].content.text == "What's weather in Nantes?"

    resources = (await client.list_resources()).resources
    documents = [r for r in resources if str(r.uri).startswith("demo://resource/static/document/")]
    assert documents, [str(r.uri) for r in resources]
    read = await client.read_resource(str(documents[0].uri))
    assert read.contents[0].text
    dynamic = await client.read_resource("demo://resource/dynamic/text/5")
    assert "5" in dynamic.contents[0].text

    with pytest.raises(MCPError) as refused:
        await client.read_resource("file:///etc/shadow")
    assert refused.value.error.code == -32602
    assert refused.value.error.data == {"uri": "file:///etc/shadow"}


async def test_prompts_and_resources_over_http(hub) -> None:
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with http_client_for(hub) as client:
            await check_relay(client)


async def test_prompts_and_resources_through_capa_mcp(hub) -> None:
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with stdio_client_for(hub.workspace) as client:
            await check_relay(client)
