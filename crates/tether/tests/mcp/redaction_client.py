"""Drives `tether mcp` with the official MCP Python SDK with a secret-named
variable in the server's environment (as agent hosts carry API keys): a
python3 REPL answers each send at once, kept commands return whole lines,
and no secret (the server's, or one the session exports) is shown by a
result or by the screen.

Usage: python redaction_client.py /path/to/tether
Exits non-zero (with the failing check) when something is wrong.
"""

import asyncio
import os
import secrets
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TETHER = sys.argv[1]
SECRET = "sk-" + secrets.token_hex(16)
OWN = "own-" + secrets.token_hex(16)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


async def call(s, name, **args):
    r = await s.call_tool(name, args)
    check(not r.is_error, f"unexpected tool error: {r.content}")
    for c in r.content:
        text = getattr(c, "text", "")
        check(SECRET not in text and OWN not in text, f"a secret in {name}'s result: {text!r}")
    return r


async def main():
    env = dict(os.environ)
    env["OPENAI_API_KEY"] = SECRET
    params = StdioServerParameters(command=TETHER, args=["mcp", "--norc"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            r = (await call(s, "shell_run", command="python3 -q", session="repl", timeout_s=20)).structured_content
            check((r["status"], r["output"]) == ("waiting_for_input", ">>> "), f"the REPL's prompt {r}")
            r = (await call(s, "shell_send", session="repl", input="print(6*7)\n", wait_s=20)).structured_content
            check((r["status"], r["output"]) == ("waiting_for_input", "42\n>>> "), f"the answer at once {r}")
            r = (await call(s, "shell_send", session="repl", input="import os; print(os.environ['OPENAI_API_KEY'])\n", wait_s=20)).structured_content
            check(r["output"] == "[redacted]\n>>> ", f"the server's secret {r}")
            r = (await call(s, "shell_send", session="repl", keys=["C-d"], wait_s=20)).structured_content
            check(r["status"] == "exited", f"the REPL ended {r}")

            r = (await call(s, "shell_run", command="echo tb-tick1; sleep 30", session="kept", timeout_s=1, on_timeout="keep")).structured_content
            check((r["status"], r["output"]) == ("running", "tb-tick1\n"), f"the kept command's first result whole {r}")
            await call(s, "shell_reset", session="kept")

            r = (await call(s, "shell_run", command=f"export MY_API_TOKEN={OWN}; echo $MY_API_TOKEN", session="repl")).structured_content
            check(r["output"] == "[redacted]\n", f"a secret the session exports {r}")
            r = (await call(s, "shell_run", command="printenv MY_API_TOKEN OPENAI_API_KEY", session="repl")).structured_content
            check(r["output"] == "[redacted]\n[redacted]\n", f"in the next call {r}")
            r = await call(s, "shell_screen", session="repl")
            screen = r.content[0].text
            check("[redacted]" in screen, f"the screen {screen!r}")
    print("mcp secrets: all checks passed")


asyncio.run(main())
