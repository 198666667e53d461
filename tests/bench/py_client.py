"""Benchmark driver for capa-bench: `execute` round trips beside MCP `ping` in one session, with
the official Python SDK (`mcp` 2.x) high-level `Client`. Prints JSON of the samples (µs) on
stdout; nothing is asserted.

    tests/.venv/bin/python tests/bench/py_client.py stdio <n> <command> [args...]
    tests/.venv/bin/python tests/bench/py_client.py http <n> <url>     (token in $CAPA_BENCH_TOKEN)

After 20 warm-up runs, n rounds of one `ping` then one `execute` of `return 1`, alternating, so
that both see the same machine. Version negotiation is the SDK's default (`auto`). The baseline is
`ping` under 2025-11-25; 2026-07-28 removed `ping`, so there it is `server/discover`, the era's
smallest request (sent raw, uncached).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

import anyio

WARM_UP = 20


async def execute(client: Any) -> None:
    result = await client.call_tool("execute", {"code": "return 1"})
    content = result.structured_content or {}
    if content.get("status") != "completed":
        raise RuntimeError(f"execute did not complete: {result!r}")


async def timed(f: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter_ns()
    await f()
    return (time.perf_counter_ns() - started) / 1000.0


async def main(kind: str, n: int, target: list[str]) -> None:
    from mcp import Client

    async with AsyncExitStack() as stack:
        if kind == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            params = StdioServerParameters(command=target[0], args=target[1:], env=dict(os.environ))
            devnull = stack.enter_context(open(os.devnull, "w"))
            transport = stdio_client(params, errlog=devnull)
        else:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            token = os.environ.get("CAPA_BENCH_TOKEN")
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            http = await stack.enter_async_context(create_mcp_http_client(headers=headers))
            transport = streamable_http_client(target[0], http_client=http)
        client = await stack.enter_async_context(Client(transport))
        for _ in range(WARM_UP):
            await execute(client)
        protocol = client.protocol_version
        baseline = "ping" if protocol == "2025-11-25" else "server/discover"

        async def request() -> Any:
            if baseline == "ping":
                return await client.send_ping()
            return await client.session.send_discover(protocol)

        ping: list[float] = []
        samples: list[float] = []
        for _ in range(n):
            ping.append(await timed(request))
            samples.append(await timed(lambda: execute(client)))
        print(json.dumps({"protocol": protocol, "baseline": baseline, "ping": ping, "execute": samples}), flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[1] not in ("stdio", "http") or not sys.argv[2].isdigit():
        print("usage: py_client.py <stdio|http> <n> <command args... | url>", file=sys.stderr)
        sys.exit(2)
    anyio.run(main, sys.argv[1], int(sys.argv[2]), sys.argv[3:])
