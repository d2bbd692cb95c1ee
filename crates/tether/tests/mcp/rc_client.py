"""A session with start-up files as people have them, through a real MCP
client (the official Python SDK): `tether mcp` with rc files, HOME holding a
.bashrc whose prompt hook forks (as pyenv-virtualenv's does) and prints.

1. On a session started a moment before, a 1 s timeout on
   `echo tb-started; sleep 5; echo tb-not-reached` stops the line: the rest
   never runs. The same under CPU load (4 busy loops).
2. A program that ignores SIGINT is ended by TERM, and the rest of the line
   does not run either; the result says which signal ended it.
3. `shell_send` of C-c reaches a kept `sleep 100` in the foreground.
4. No result names a holder of the terminal.

Usage: python rc_client.py /path/to/tether HOME
Prints "mcp rc: all checks passed"; exits non-zero on a failed check.
"""

import asyncio
import os
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from kit import alive, check, read_pid, run, wait_for

TETHER = sys.argv[1]
HOME = sys.argv[2]

BASHRC = r"""
echo banner from the rc file
__my_hook() {
  local ret=$?
  [ "$(stat -L -c %Y "$HOME" 2>/dev/null)" = "${__MY_MTIME-}" ] || __MY_MTIME=$(stat -L -c %Y "$HOME")
  echo hook-noise
  return $ret
}
PROMPT_COMMAND="__my_hook;${PROMPT_COMMAND-}"
"""




async def timeout_stops_the_line(s, session):
    sc = await run(s, command="echo tb-started; sleep 5; echo tb-not-reached", session=session, timeout_s=1)
    check(sc["status"] == "timed_out", f"timed out: {sc}")
    check("tb-started" in sc["output"] and "tb-not-reached" not in sc["output"], f"the line stopped: {sc}")
    sc = await run(s, command="echo next", session=session)
    check(sc["output"] == "next\n", f"the session goes on: {sc}")


async def main():
    with open(os.path.join(HOME, ".bashrc"), "w") as f:
        f.write(BASHRC)
    env = dict(os.environ)
    env["HOME"] = HOME
    params = StdioServerParameters(command=TETHER, args=["mcp"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            # 1. a session started a moment before
            await timeout_stops_the_line(s, "fresh")
            # ... and under CPU load
            hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(4)]
            try:
                await timeout_stops_the_line(s, "loaded")
            finally:
                for h in hogs:
                    h.kill()
                    h.wait()
            # 2. a program that outlives SIGINT
            sc = await run(s, command="echo a; sh -c 'trap \"\" INT; sleep 30'; echo never", session="fresh",
                           timeout_s=1)
            check(sc["status"] == "timed_out" and "never" not in sc["output"], f"TERM stops the line: {sc}")
            check(sc.get("signal") == "SIGTERM", f"says TERM ended it: {sc}")
            # 3. C-c reaches a kept program
            pidfile = os.path.join(HOME, "kept.pid")
            sc = await run(s, command=f"sh -c 'echo $$ > {pidfile}; exec sleep 100'; echo never", session="kept",
                           timeout_s=0.5, on_timeout="keep")
            check(sc["status"] == "running", f"kept: {sc}")
            pid = await wait_for("the kept sleep", lambda: read_pid(pidfile))
            r = await s.call_tool("shell_send", {"session": "kept", "keys": ["C-c"], "wait_s": 5})
            check(not r.is_error, f"send C-c: {r}")
            await wait_for("C-c to end the sleep", lambda: not alive(pid))
            sc = r.structured_content
            check("never" not in sc["output"], f"C-c stops the line: {sc}")
    print("mcp rc: all checks passed")


asyncio.run(main())
