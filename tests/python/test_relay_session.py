"""What a source says and asks during a session, through the hub (docs/relay.md), with the Python
SDK's high-level Client (mcp 2.x) over Streamable HTTP, in both eras: server-everything's
sampling request during a direct call reaches the client's sampling callback (on the session in
the initialize era, in an input_required round on 2026-07-28, which the SDK answers and
retries); in the initialize era its log messages come back, named after the source, from the
level the client set, and a subscription reaches it."""

from __future__ import annotations

import anyio
import pytest
from mcp import types

from conftest import SESSION_TIMEOUT_S, capa, http_client_for

pytestmark = pytest.mark.anyio

SAMPLED = "a sampled answer from the Python client"


async def sample(context, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    asked = params.messages[0].content
    assert "from python" in getattr(asked, "text", ""), params
    # The request says which source asks (issue 39).
    assert (params.system_prompt or "").startswith('The MCP server "everything"'), params
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text=SAMPLED), model="test-model"
    )


def allow_sampling(hub) -> None:
    """Sampling is off until a person allows the source (issue 39): as at a terminal."""
    done = capa(hub.workspace, "sources", "allow-sampling", "everything", terminal=True)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_sampling_reaches_the_client_of_the_call(hub, mode: str) -> None:
    allow_sampling(hub)
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with http_client_for(hub, mode=mode, sampling_callback=sample) as client:
            result = await client.call_tool(
                "everything.trigger-sampling-request", {"prompt": "asked from python", "maxTokens": 10}
            )
            assert not result.is_error, result
            assert SAMPLED in str(result.content), result


async def test_log_messages_and_subscriptions_in_the_initialize_era(hub) -> None:
    messages: list[types.LoggingMessageNotificationParams] = []

    async def heard(params: types.LoggingMessageNotificationParams) -> None:
        messages.append(params)

    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with http_client_for(hub, mode="legacy", logging_callback=heard) as client:
            await client.set_logging_level("info")
            # everything logs each subscription it receives, at level info.
            await client.subscribe_resource("demo://resource/static/document/architecture.md")
            with anyio.fail_after(10):
                while not any("Subscribe" in str(m.data) for m in messages):
                    await anyio.sleep(0.1)
            message = next(m for m in messages if "Subscribe" in str(m.data))
            assert message.logger == "everything", message
            assert message.level == "info", message
            await client.unsubscribe_resource("demo://resource/static/document/architecture.md")


async def test_a_listen_stream_hears_of_a_subscribed_resource(hub) -> None:
    """2026-07-28 has no resources/subscribe: a `subscriptions/listen` stream names the URIs, the
    hub subscribes at the source while the stream is open and reports the source's updates."""
    from mcp.shared.subscriptions import ResourceUpdated

    uri = "demo://resource/static/document/extension.md"
    with anyio.fail_after(SESSION_TIMEOUT_S):
        async with http_client_for(hub, mode="auto") as client:
            async with client.listen(resource_subscriptions=[uri]) as sub:
                assert list(sub.honored.resource_subscriptions or ()) == [uri], sub.honored
                # everything then tells its subscribers' resources changed (once at once, then
                # every 5 s).
                toggled = await client.call_tool("everything.toggle-subscriber-updates", {})
                assert not toggled.is_error, toggled
                with anyio.fail_after(15):
                    async for event in sub:
                        if isinstance(event, ResourceUpdated) and event.uri == uri:
                            break
