"""What the MCP client checks share: a failed check, a live process, a
condition waited for with a deadline, a pid written to a file, a
shell_run that must succeed and name no holder."""

import asyncio
import time


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return ") Z " not in f.read()
    except OSError:
        return False


async def wait_for(what, f, secs=20):
    deadline = time.monotonic() + secs
    while True:
        v = f()
        if v:
            return v
        check(time.monotonic() < deadline, f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


def read_pid(path):
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


async def run(s, **args):
    r = await s.call_tool("shell_run", args)
    check(not r.is_error, f"shell_run {args}: {r}")
    sc = r.structured_content
    check(sc["terminal_holders"] == [], f"no holders: {sc}")
    return sc
