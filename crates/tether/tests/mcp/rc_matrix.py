"""One start-up setup (HOME holds its .bashrc) through a real MCP client,
the official Python SDK, against `tether mcp` with rc files: `echo hello`
is exactly `hello`, `(exit 3)` is 3, a 1 s timeout on
`echo a; sleep 5; echo never` never runs `never`, `read x` waits for
input, and no result names a holder of the terminal.

Usage: python rc_matrix.py /path/to/tether HOME
Prints "rc matrix: all checks passed"; exits non-zero on a failed check.
"""

import asyncio
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from kit import check, run

TETHER = sys.argv[1]
HOME = sys.argv[2]




async def main():
    env = dict(os.environ)
    env["HOME"] = HOME
    params = StdioServerParameters(command=TETHER, args=["mcp"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            sc = await run(s, command="echo hello", session="m")
            check((sc["status"], sc["output"]) == ("exited", "hello\n"), f"hello: {sc}")
            sc = await run(s, command="(exit 3)", session="m")
            check(sc["exit_code"] == 3, f"exit 3: {sc}")
            sc = await run(s, command="echo a; sleep 5; echo never", session="m", timeout_s=1)
            check(sc["status"] == "timed_out" and "never" not in sc["output"], f"timeout: {sc}")
            sc = await run(s, command="read x", session="m")
            check(sc["status"] == "waiting_for_input", f"read: {sc}")
            r = await s.call_tool("shell_send", {"session": "m", "input": "x\n"})
            check(not r.is_error, f"send: {r}")
            sc = await run(s, command="echo $x", session="m")
            check(sc["output"] == "x\n", f"answered: {sc}")
    print("rc matrix: all checks passed")


asyncio.run(main())
