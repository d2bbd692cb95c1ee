"""Drives `tether mcp --confine workspace` with the official MCP Python SDK:
the server's confinement applies to the agent's sessions, a call may
tighten it (`read-only`) and never loosen it (`none`), and every result
says what it is.

Usage: python confine_client.py /path/to/tether WORKSPACE OUTSIDE
Exits non-zero (with the failing check) when something is wrong.
"""

import asyncio
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TETHER, WORKSPACE, OUTSIDE = sys.argv[1], sys.argv[2], sys.argv[3]


def check(cond, what):
    if not cond:
        raise AssertionError(what)


async def main():
    params = StdioServerParameters(
        command=TETHER, args=["mcp", "--norc", "--confine", "workspace"], env=dict(os.environ), cwd=WORKSPACE
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            tools = {t.name: t for t in (await s.list_tools()).tools}
            check("confine" in tools["shell_run"].input_schema["properties"], "shell_run takes confine")

            r = await s.call_tool("shell_run", {"command": f"touch in && echo made; touch {OUTSIDE}/out", "session": "w"})
            sc = r.structured_content
            check(sc["confinement"]["mode"] == "workspace", f"the server's confinement {sc}")
            check(sc["confinement"]["roots"] == [WORKSPACE], f"its root {sc}")
            check("made" in sc["output"] and "Read-only file system" in sc["output"], f"writes {sc}")
            check(not os.path.exists(os.path.join(OUTSIDE, "out")), "written outside")

            r = await s.call_tool("shell_run", {"command": "touch x", "session": "loose", "confine": "none"})
            check(r.is_error, f"loosened: {r.content}")
            text = r.content[0].text
            check("loosen" in text, f"the refusal says why: {text!r}")
            r = await s.call_tool("exec_hosts", {"hosts": "localhost", "command": f"touch {OUTSIDE}/fleet"})
            check(r.is_error and "outside any fence" in r.content[0].text, f"exec_hosts under a fence: {r.content}")
            check(not os.path.exists(os.path.join(OUTSIDE, "fleet")), "exec_hosts ran")

            r = await s.call_tool("shell_list", {})
            check("loose" not in r.content[0].text, "a refused session exists")

            r = await s.call_tool("shell_run", {"command": "touch in2", "session": "ro", "confine": "read-only"})
            sc = r.structured_content
            check(sc["confinement"]["mode"] == "read-only", f"tightened {sc}")
            check("Read-only file system" in sc["output"], f"read-only writes {sc}")
    print("mcp confine: all checks passed")


asyncio.run(main())
