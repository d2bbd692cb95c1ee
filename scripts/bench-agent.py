#!/usr/bin/env python3
"""The agent path side by side (issue 15): the round trip of `true` through
every way an agent or a script runs a command in a shell, measured in one
run, the peers interleaved in blocks so that the machine's noise hits all
alike.

Peers (each skipped with a note when it cannot run here):

  engine        the engine in process (the `engine` bench binary, --serve)
  daemon        a raw client of the daemon's socket: one connection, `run`
  mcp-raw       `tether mcp` through a raw stdio JSON-RPC client
  mcp-sdk       `tether mcp` through the official MCP Python SDK
                (target/mcp-venv, which scripts/test creates)
  cli           one `tether run -s b -- true` process per call
  bash-c        one fresh `bash --norc --noprofile -c true` per call
  pexpect       pexpect, `$?` in PS1, no send delay (the bare floor of the
                "marker in PS1" approach)
  pexpect-50ms  the same with pexpect's default 50 ms send delay
  swe-rex       SWE-ReX's LocalRuntime: create_session, run_in_session
                (installed into target/bench-venv with pip when missing)

Usage:
  python3 scripts/bench-agent.py [--tether BIN] [--engine BIN] [--rounds R]
                                 [--block N] [--only a,b,...] [--json]
                                 [--base-tether BIN] [--base-engine BIN]

--base-tether and --base-engine add a second build (its own daemon) to the
same rounds: rows `engine (base)`, `daemon (base)`, `mcp-raw (base)` and
`cli (base)`, for a before/after measured side by side.

The engine binary is built (cargo bench --no-run) when not given; the
tether binary is target/release/tether (build it first). Each round runs
one block per peer in turn; a peer that costs a process per call runs a
fifth of a block, pexpect-50ms and swe-rex a twentieth. Medians, p90 and
p99 are over every call; the ratio is each median over the engine's.
"""

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MCP_VENV_PY = os.path.join(REPO, "target", "mcp-venv", "bin", "python")
BENCH_VENV = os.path.join(REPO, "target", "bench-venv")
BENCH_VENV_PY = os.path.join(BENCH_VENV, "bin", "python")


def log(msg):
    print(f"bench-agent: {msg}", file=sys.stderr, flush=True)


def protocol_version():
    src = open(os.path.join(REPO, "crates", "tether-daemon", "src", "protocol.rs")).read()
    return int(re.search(r"PROTOCOL_VERSION: u32 = (\d+);", src).group(1))


def percentile(sorted_vals, q):
    pos = (len(sorted_vals) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)


def timed(f):
    t = time.perf_counter_ns()
    f()
    return (time.perf_counter_ns() - t) / 1e6


class Helper:
    """A process that runs N calls per line on stdin and prints their
    latencies (ms) on one line of stdout, after a first line `ready`."""

    def __init__(self, argv, env=None):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
        line = self.p.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError(f"{argv[0]} did not start: {line!r}")

    def block(self, n):
        self.p.stdin.write(f"{n}\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError("the helper ended")
        return [float(x) for x in line.split()]

    def stop(self):
        try:
            self.p.stdin.close()
            self.p.wait(timeout=10)
        except Exception:
            self.p.kill()


class Daemon:
    """A private daemon (its own TETHER_DIR on tmpfs) with session `b`."""

    def __init__(self, tether):
        base = "/dev/shm" if os.path.isdir("/dev/shm") else None
        self.dir = tempfile.mkdtemp(prefix="tether-bench-agent-", dir=base)
        self.env = dict(os.environ, TETHER_DIR=self.dir)
        self.env.pop("XDG_RUNTIME_DIR", None)
        self.tether = tether
        subprocess.run([tether, "run", "-s", "b", "--norc", "--", "true"], env=self.env, check=True)

    def stop(self):
        subprocess.run([self.tether, "daemon", "stop"], env=self.env, stderr=subprocess.DEVNULL)
        shutil.rmtree(self.dir, ignore_errors=True)


class Engine:
    name = "engine"
    note = "the engine in process (nonce marks, exit, cwd)"

    def __init__(self, ctx):
        self.h = Helper([ctx.engine, "--serve"])

    def block(self, n):
        return self.h.block(n)

    def stop(self):
        self.h.stop()


class DaemonRaw:
    name = "daemon"
    note = "raw client of the daemon's socket, one connection"

    def __init__(self, ctx):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(os.path.join(ctx.daemon.dir, "daemon.sock"))
        self.f = self.s.makefile("rwb")
        self.line({"protocol": ctx.protocol, "client": "bench-agent", "namespace": None, "lease": False})
        self.req = (json.dumps({"op": "run", "session": "b", "command": "true", "timeout_s": 120,
                                "output_limit": 16000}) + "\n").encode()

    def line(self, value):
        self.f.write((json.dumps(value) + "\n").encode())
        self.f.flush()
        return json.loads(self.f.readline())

    def call(self):
        self.f.write(self.req)
        self.f.flush()
        r = json.loads(self.f.readline())
        assert r["ok"]["exit_code"] == 0, r

    def block(self, n):
        return [timed(self.call) for _ in range(n)]

    def stop(self):
        self.s.close()


class McpRaw:
    name = "mcp-raw"
    note = "`tether mcp`, raw stdio JSON-RPC client"

    def __init__(self, ctx):
        self.p = subprocess.Popen([ctx.tether, "mcp", "--norc"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  env=ctx.daemon.env)
        self.id = 0
        self.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "bench-agent", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, value):
        self.p.stdin.write((json.dumps(value) + "\n").encode())
        self.p.stdin.flush()

    def rpc(self, method, params):
        self.id += 1
        self.send({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params})
        while True:
            msg = json.loads(self.p.stdout.readline())
            if msg.get("id") == self.id:
                return msg

    def call(self):
        r = self.rpc("tools/call", {"name": "shell_run", "arguments": {"command": "true"}})
        assert r["result"]["structuredContent"]["exit_code"] == 0, r

    def block(self, n):
        return [timed(self.call) for _ in range(n)]

    def stop(self):
        self.p.stdin.close()
        self.p.wait(timeout=10)


MCP_SDK_HELPER = r"""
import asyncio, os, sys, time
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main(tether):
    params = StdioServerParameters(command=tether, args=["mcp", "--norc"], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            print("ready", flush=True)
            loop = asyncio.get_running_loop()
            while True:
                line = await loop.run_in_executor(None, sys.stdin.readline)
                if not line.strip():
                    return
                ms = []
                for _ in range(int(line)):
                    t = time.perf_counter_ns()
                    r = await s.call_tool("shell_run", {"command": "true"})
                    ms.append((time.perf_counter_ns() - t) / 1e6)
                    assert r.structured_content["exit_code"] == 0
                print(" ".join(f"{x:.4f}" for x in ms), flush=True)

asyncio.run(main(sys.argv[1]))
"""


class McpSdk:
    name = "mcp-sdk"
    note = "`tether mcp`, official MCP Python SDK"

    def __init__(self, ctx):
        if not os.path.exists(MCP_VENV_PY):
            raise RuntimeError(f"{MCP_VENV_PY} is missing (scripts/test creates it)")
        self.h = Helper([MCP_VENV_PY, "-c", MCP_SDK_HELPER, ctx.tether], env=ctx.daemon.env)

    def block(self, n):
        return self.h.block(n)

    def stop(self):
        self.h.stop()


class Process:
    """One process per call."""

    scale = 5

    def __init__(self, ctx):
        self.env = ctx.daemon.env

    def call(self):
        subprocess.run(self.argv, env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=True)

    def block(self, n):
        return [timed(self.call) for _ in range(n)]

    def stop(self):
        pass


class Cli(Process):
    name = "cli"
    note = "one `tether run -s b -- true` process per call"

    def __init__(self, ctx):
        super().__init__(ctx)
        self.argv = [ctx.tether, "run", "-s", "b", "--", "true"]


class BashC(Process):
    name = "bash-c"
    note = "a fresh `bash --norc --noprofile -c true` per call"

    def __init__(self, ctx):
        super().__init__(ctx)
        self.argv = ["bash", "--norc", "--noprofile", "-c", "true"]


class Pexpect:
    name = "pexpect"
    note = "pexpect, `$?` in PS1, no send delay"
    delay = None
    scale = 1

    def __init__(self, ctx):
        import pexpect

        self.child = pexpect.spawn("bash", ["--norc", "--noprofile"], encoding="utf-8", echo=False, timeout=10)
        default = self.child.delaybeforesend
        self.child.delaybeforesend = None
        self.child.sendline("PS1='__PEXPECT_PROMPT_$?__ '; PS2=''; unset PROMPT_COMMAND HISTFILE")
        self.child.expect(r"__PEXPECT_PROMPT_(\d+)__ ")
        self.child.delaybeforesend = default if self.delay == "default" else None

    def call(self):
        self.child.sendline("true")
        self.child.expect(r"__PEXPECT_PROMPT_(\d+)__ ")
        assert self.child.match.group(1) == "0"

    def block(self, n):
        return [timed(self.call) for _ in range(n)]

    def stop(self):
        self.child.close(force=True)


class PexpectDefault(Pexpect):
    name = "pexpect-50ms"
    note = "pexpect, default 50 ms send delay"
    delay = "default"
    scale = 20


SWEREX_HELPER = r"""
import asyncio, sys, time
from swerex.runtime.local import LocalRuntime
from swerex.runtime.abstract import BashAction, CreateBashSessionRequest

async def main():
    rt = LocalRuntime()
    await rt.create_session(CreateBashSessionRequest())
    for _ in range(3):
        await rt.run_in_session(BashAction(command="true", check="raise"))
    print("ready", flush=True)
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line.strip():
            break
        ms = []
        for _ in range(int(line)):
            t = time.perf_counter_ns()
            r = await rt.run_in_session(BashAction(command="true", check="raise"))
            ms.append((time.perf_counter_ns() - t) / 1e6)
            assert r.exit_code == 0, r
        print(" ".join(f"{x:.4f}" for x in ms), flush=True)
    await rt.close()

asyncio.run(main())
"""


def bench_venv_with(module, package):
    """target/bench-venv's python with `package` installed (pip, once)."""
    if not os.path.exists(BENCH_VENV_PY):
        log(f"creating {BENCH_VENV}")
        subprocess.run([sys.executable, "-m", "venv", BENCH_VENV], check=True, stdout=sys.stderr)
    probe = subprocess.run([BENCH_VENV_PY, "-c", f"import {module}"], capture_output=True)
    if probe.returncode != 0:
        log(f"installing {package} into {BENCH_VENV}")
        subprocess.run([BENCH_VENV_PY, "-m", "pip", "install", "--disable-pip-version-check", "-q", package],
                       check=True, stdout=sys.stderr)
    return BENCH_VENV_PY


class SweRex:
    name = "swe-rex"
    note = "SWE-ReX LocalRuntime, run_in_session"
    scale = 20

    def __init__(self, ctx):
        py = bench_venv_with("swerex", "swe-rex")
        self.h = Helper([py, "-c", SWEREX_HELPER])

    def block(self, n):
        return self.h.block(n)

    def stop(self):
        self.h.stop()


PEERS = [Engine, DaemonRaw, McpRaw, McpSdk, Cli, BashC, Pexpect, PexpectDefault, SweRex]


def engine_binary():
    out = subprocess.run(["cargo", "bench", "-p", "tether-shell", "--bench", "engine", "--no-run",
                          "--message-format=json"], cwd=REPO, capture_output=True, text=True, check=True)
    for line in out.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == "engine" \
                and msg.get("executable"):
            return msg["executable"]
    raise RuntimeError("cargo did not name the engine bench binary")


class Ctx:
    pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tether", default=os.path.join(REPO, "target", "release", "tether"))
    ap.add_argument("--engine", help="the engine bench binary (default: built by cargo)")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--block", type=int, default=100, help="calls per block (default 100)")
    ap.add_argument("--only", help="comma-separated peer names")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--base-tether", help="a second tether build, measured in the same rounds")
    ap.add_argument("--base-engine", help="a second engine bench binary (with --serve)")
    ap.add_argument("--base-protocol", type=int,
                    help="the daemon protocol version the base build speaks (default: this checkout's)")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None

    ctx = Ctx()
    ctx.tether = os.path.abspath(args.tether)
    ctx.protocol = protocol_version()
    ctx.engine = args.engine or engine_binary()
    ctx.daemon = Daemon(ctx.tether)

    def on_signal(signum, _frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)

    base = None
    if args.base_tether:
        base = Ctx()
        base.tether = os.path.abspath(args.base_tether)
        base.protocol = args.base_protocol or ctx.protocol
        base.engine = args.base_engine or ctx.engine
        base.daemon = Daemon(base.tether)
    todo = [(cls, ctx, "") for cls in PEERS]
    if base:
        todo += [(cls, base, " (base)") for cls in (Engine, DaemonRaw, McpRaw, Cli)
                 if cls is not Engine or args.base_engine]

    peers, notes = [], {}
    try:
        for cls, c, suffix in todo:
            if only and cls.name not in only:
                continue
            try:
                peer = cls(c)
                peer.name = cls.name + suffix
                peer.block(max(1, args.block // getattr(cls, "scale", 1) // 5))  # warm-up
                peers.append(peer)
            except Exception as e:  # noqa: BLE001 - a peer that cannot run is a note
                notes[cls.name + suffix] = f"skipped: {e}"
                log(f"{cls.name}{suffix} skipped: {e}")
        samples = {p.name: [] for p in peers}
        for r in range(args.rounds):
            order = peers[:]
            random.shuffle(order)
            for p in order:
                n = max(1, args.block // getattr(p, "scale", 1))
                samples[p.name].extend(p.block(n))
            log(f"round {r + 1}/{args.rounds} done")
    finally:
        for p in peers:
            try:
                p.stop()
            except Exception:
                pass
        ctx.daemon.stop()
        if base:
            base.daemon.stop()

    result = {}
    for p in peers:
        s = sorted(samples[p.name])
        result[p.name] = {"median": statistics.median(s), "p90": percentile(s, 0.9), "p99": percentile(s, 0.99),
                          "n": len(s), "note": p.note}
    ref = result.get("engine", {}).get("median")
    if args.json:
        print(json.dumps({"peers": result, "skipped": notes, "date": time.strftime("%Y-%m-%d")}))
        return
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, load {os.getloadavg()[0]:.1f}; round trip of `true`, ms")
    print("| peer | median | p90 | p99 | n | median / engine |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, r in result.items():
        ratio = f"{r['median'] / ref:.2f}" if ref else "–"
        print(f"| {name}: {r['note']} | {r['median']:.3f} | {r['p90']:.3f} | {r['p99']:.3f} | {r['n']} | {ratio} |")
    for name, why in notes.items():
        print(f"| {name} | {why} | | | | |")


if __name__ == "__main__":
    main()
