"""MCP `shell_run` of `true` through the official MCP Python SDK, N calls
(default 500): per-call latency seen by the client (JSON-RPC over stdio,
the tool call, the engine round trip). Prints median / p90 / p99 in ms.

Usage: target/mcp-venv/bin/python scripts/bench-mcp.py target/release/tether [N]
"""

import asyncio
import os
import statistics
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(tether, n):
    params = StdioServerParameters(command=tether, args=["mcp", "--norc"], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            for _ in range(50):
                await s.call_tool("shell_run", {"command": "true"})
            ms = []
            for _ in range(n):
                t = time.perf_counter_ns()
                r = await s.call_tool("shell_run", {"command": "true"})
                ms.append((time.perf_counter_ns() - t) / 1e6)
                assert r.structured_content["exit_code"] == 0
    q = statistics.quantiles(ms, n=100)
    print(f"shell_run true x{n}: median {statistics.median(ms):.3f} ms, p90 {q[89]:.3f} ms, p99 {q[98]:.3f} ms")


asyncio.run(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 500))
