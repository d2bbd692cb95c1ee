"""Shells started inside a session, through a real MCP client (the official
Python SDK): `shell_run` of `bash --norc` (and of `sudo -i` when run as
root with sudo) is armed; inside it `(exit 4)`, `cd /tmp` and `whoami` are
exact; `exit` comes back to the session's own shell. Each result's
structured content says where the command ran (`nested`) and how the call
changed that (`nest_change`); the text a model reads says so too.

Usage: python nested_client.py /path/to/tether
Prints "mcp nested: all checks passed" (and "SKIPPED: ..." for what cannot
run here); exits non-zero on a failed check.
"""

import asyncio
import os
import pwd
import shutil
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from kit import check

TETHER = sys.argv[1]
ME = pwd.getpwuid(os.getuid()).pw_name


async def run(s, session, command):
    r = await s.call_tool("shell_run", {"command": command, "session": session})
    check(not r.is_error, f"shell_run {command!r}: {r}")
    text = "".join(c.text for c in r.content if getattr(c, "type", "") == "text")
    return r.structured_content, text


def chain(sc):
    return [(l["program"], l["user"]) for l in sc["nested"]]


async def enter_and_return(s, session, enter, program, user):
    sc, _ = await run(s, session, "cd / && echo $$")
    outer_pid = sc["output"].strip()
    check(sc["nested"] == [] and sc["nest_change"] is None, f"the session's own shell: {sc}")

    sc, text = await run(s, session, enter)
    check(sc["status"] == "entered_shell", f"{enter}: entered: {sc}")
    check(sc["exit_code"] is None, f"{enter}: no exit code yet: {sc}")
    check(sc["nest_change"] == "entered", f"{enter}: nest_change: {sc}")
    check(chain(sc) == [(program, user)], f"{enter}: nested: {sc}")
    check(sc["nested"][0]["replaced"] is False, f"{enter}: not replaced: {sc}")
    check(isinstance(sc["nested"][0]["pid"], int), f"{enter}: a pid: {sc}")
    check("entered a shell: later commands run in " in text, f"{enter}: the text says so: {text!r}")

    sc, text = await run(s, session, "(exit 4)")
    check((sc["status"], sc["exit_code"]) == ("exited", 4), f"{enter}: (exit 4): {sc}")
    check(sc["nest_change"] is None and chain(sc) == [(program, user)], f"{enter}: still inside: {sc}")
    check("exit 4" in text and f"in {program} (pid " in text, f"{enter}: the text: {text!r}")

    sc, _ = await run(s, session, "cd /tmp")
    check((sc["exit_code"], sc["cwd"]) == (0, "/tmp"), f"{enter}: cd /tmp: {sc}")

    sc, _ = await run(s, session, "whoami; echo $$")
    lines = sc["output"].splitlines()
    check(lines[0] == user, f"{enter}: whoami: {sc}")
    check(lines[1] != outer_pid, f"{enter}: another shell: {sc}")

    sc, text = await run(s, session, "exit")
    check((sc["status"], sc["exit_code"]) == ("exited", 0), f"{enter}: exit: {sc}")
    check(sc["nest_change"] == "returned" and sc["nested"] == [], f"{enter}: returned: {sc}")
    check("its shell exited: later commands run in the session's shell" in text, f"{enter}: {text!r}")

    sc, _ = await run(s, session, "echo $$ $PWD; (exit 5)")
    check((sc["exit_code"], sc["output"]) == (5, f"{outer_pid} /\n"), f"{enter}: the own shell back: {sc}")
    check(sc["nested"] == [] and sc["nest_change"] is None, f"{enter}: back: {sc}")
    print(f"mcp nested: {enter} armed, exact inside, exit came back")


async def main():
    params = StdioServerParameters(command=TETHER, args=["mcp", "--norc"], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            await enter_and_return(s, "nb", "bash --norc", "bash", ME)
            if shutil.which("sudo") is None:
                print("SKIPPED: sudo -i: sudo is not installed (scripts/test installs it as root)")
            elif os.getuid() != 0:
                print("SKIPPED: sudo -i: not root (it needs root without a password)")
            else:
                await enter_and_return(s, "ns", "sudo -i", "bash", "root")
    print("mcp nested: all checks passed")


asyncio.run(main())
