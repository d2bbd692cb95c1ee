"""Faults seen through a real MCP client (the official Python SDK):

1. the client cancels a call (`notifications/cancelled`, which the SDK sends
   when the awaiting task is cancelled): the command is interrupted at
   once, and the session keeps working;
2. the daemon is SIGKILLed during a call: the call fails saying the command
   may have run, it is never re-sent (a ledger line written once), and the
   next call continues the session with its cwd and exports, saying so;
3. the MCP server is SIGKILLed, or its stdin closed, with a call in
   flight: the daemon ends its sessions and their processes.

Usage: python faults_client.py /path/to/tether WORKDIR
Prints "mcp faults: all checks passed"; exits non-zero on a failed check.
"""

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from kit import alive, check, read_pid, wait_for

TETHER = sys.argv[1]
WORK = sys.argv[2]


def daemon_pid():
    out = subprocess.run([TETHER, "daemon", "status"], capture_output=True, text=True).stdout
    m = re.search(r"\(pid (\d+)\)", out)
    check(m, f"daemon status: {out!r}")
    return int(m.group(1))


def sessions_of_all():
    out = subprocess.run([TETHER, "ls", "--json"], capture_output=True, text=True).stdout
    return json.loads(out)["sessions"] if out.strip() else []


async def cancelled_and_daemon_killed():
    params = StdioServerParameters(command=TETHER, args=["mcp", "--norc"], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()

            # 1. cancel
            pidfile = os.path.join(WORK, "cancel.pid")
            cmd = f"sh -c 'echo $$ > {pidfile}; exec sleep 60'"
            task = asyncio.create_task(s.call_tool("shell_run", {"command": cmd, "session": "c", "timeout_s": 120}))
            pid = await wait_for("the sleep to start", lambda: read_pid(pidfile))
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
            await wait_for("the cancelled command to be interrupted", lambda: not alive(pid))
            r = await s.call_tool("shell_run", {"command": "echo still-here", "session": "c"})
            sc = r.structured_content
            check(not r.is_error and (sc["status"], sc["output"]) == ("exited", "still-here\n"), f"after cancel {r}")

            # 2. the daemon killed during a call
            r = await s.call_tool("shell_run", {"command": f"cd {WORK} && export OWNER=alice", "session": "k"})
            check(not r.is_error, f"setup {r}")
            marker = os.path.join(WORK, "k.pid")
            cmd = f"echo charge-card >> ledger.txt; sh -c 'echo $$ > {marker}; exec sleep 60'"
            task = asyncio.create_task(s.call_tool("shell_run", {"command": cmd, "session": "k", "timeout_s": 120}))
            await wait_for("the charge to start", lambda: read_pid(marker))
            dpid = daemon_pid()
            os.kill(dpid, signal.SIGKILL)
            r = await task
            text = r.content[0].text
            check(r.is_error and "may have run" in text, f"the lost call: {r}")
            r = await s.call_tool("shell_run", {"command": "wc -l < ledger.txt; pwd; echo $OWNER", "session": "k"})
            sc = r.structured_content
            check(not r.is_error, f"continued {r}")
            check(sc["shell_restarted"] is True, f"says the shell is new {sc}")
            check(sc["output"].endswith(f"1\n{WORK}\nalice\n"), f"once, cwd, exports: {sc['output']!r}")
            check("stopped without closing it" in sc["output"], f"the note: {sc['output']!r}")
    print("mcp faults: cancel and daemon kill passed")


def raw_server():
    p = subprocess.Popen([TETHER, "mcp", "--norc"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         env=dict(os.environ))

    def send(obj):
        p.stdin.write((json.dumps(obj) + "\n").encode())
        p.stdin.flush()

    def recv():
        return json.loads(p.stdout.readline())

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    check("result" in recv(), "initialize")
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return p, send


async def server_gone(how):
    p, send = raw_server()
    pidfile = os.path.join(WORK, f"gone-{how}.pid")
    escape = os.path.join(WORK, f"gone-{how}-escape.pid")
    cmd = (f"(setsid sh -c 'echo $$ > {escape}; exec sleep 300' </dev/null >/dev/null 2>&1 &); "
           f"sh -c 'echo $$ > {pidfile}; exec sleep 300'")
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
          "params": {"name": "shell_run", "arguments": {"command": cmd, "timeout_s": 600}}})
    pids = [await wait_for("the sleep to start", lambda: read_pid(pidfile)),
            await wait_for("the escape to start", lambda: read_pid(escape))]
    ns = f"mcp-{p.pid}"
    check(any(x.get("namespace") == ns for x in sessions_of_all()), "the server's session is listed")
    if how == "kill":
        p.kill()
    else:
        p.stdin.close()
    for pid in pids:
        await wait_for(f"{how}: the session's processes to end", lambda: not alive(pid))
    await wait_for(f"{how}: the session to be gone",
                   lambda: not any(x.get("namespace") == ns for x in sessions_of_all()))
    p.wait(timeout=30)


async def main():
    await cancelled_and_daemon_killed()
    await server_gone("kill")
    await server_gone("stdin")
    print("mcp faults: all checks passed")


asyncio.run(main())
