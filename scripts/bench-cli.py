#!/usr/bin/env python3
"""End-to-end latency of `tether run -s b -- true` with a warm daemon (CLI
process start, daemon round trip, the command, exit), beside `bash -c true`
and `tether run --once`, interleaved in one run.

--nested: the round trip of `true` in a session's own bash against the same
inside a nested `bash --norc` (armed by the session), interleaved in one
run, through `tether run` (a process each) and through `tether mcp` (raw
JSON-RPC over stdio, one server: no process start in the figure). Two ways
each: two sessions, one with the nested shell entered, alternating call by
call; and one session, alternating blocks of BLOCK calls in its own shell
and inside `bash --norc` (entered and left between blocks, not timed).
Prints the medians and the nested / own ratio.

usage: scripts/bench-cli.py [TETHER_BINARY] [ROUNDS]   (default target/release/tether, 300)
       scripts/bench-cli.py --nested [TETHER_BINARY] [ROUNDS] [BLOCK]   (default 300, 10)
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

nested = sys.argv[1:2] == ["--nested"]
argv = sys.argv[2:] if nested else sys.argv[1:]
tether = argv[0] if argv else "target/release/tether"
rounds = int(argv[1]) if len(argv) > 1 else 300
block = int(argv[2]) if len(argv) > 2 else 10
env = dict(os.environ, TETHER_DIR=tempfile.mkdtemp(prefix="tether-bench-"))
env.pop("XDG_RUNTIME_DIR", None)

def timed(argv):
    t = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - t) * 1000


def run_json(session, code):
    out = subprocess.run([tether, "run", "-s", session, "--norc", "--json", "--", code],
                         env=env, stdout=subprocess.PIPE, check=False)
    return json.loads(out.stdout)


def enter(session):
    r = run_json(session, "bash --norc")
    assert r["status"] == "entered_shell" and len(r["nested"]) == 1, r


def leave(session):
    r = run_json(session, "exit")
    assert r["nest_change"] == "returned" and r["nested"] == [], r


class Mcp:
    """`tether mcp --norc` spoken to in raw JSON-RPC lines."""

    def __init__(self):
        self.p = subprocess.Popen([tether, "mcp", "--norc"], env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE)
        self.id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "0"}})
        self.write({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def write(self, msg):
        self.p.stdin.write(json.dumps(msg).encode() + b"\n")
        self.p.stdin.flush()

    def request(self, method, params):
        self.id += 1
        self.write({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params})
        while True:
            v = json.loads(self.p.stdout.readline())
            if v.get("id") == self.id:
                return v

    def run(self, session, code):
        v = self.request("tools/call", {"name": "shell_run",
                                        "arguments": {"command": code, "session": session}})
        return v["result"]["structuredContent"]

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def timed_mcp(m, session, nested_depth):
    t = time.perf_counter()
    r = m.run(session, "true")
    ms = (time.perf_counter() - t) * 1000
    assert r["exit_code"] == 0 and len(r["nested"]) == nested_depth, r
    return ms


def nested_bench():
    cli = lambda s: [tether, "run", "-s", s, "--", "true"]
    samples = {k: [] for k in ["cli two", "cli one", "mcp two", "mcp one"]}
    own = {k: [] for k in samples}
    # Two sessions: `o` in its own shell, `n` inside `bash --norc`.
    for s in ["o", "n", "s"]:
        subprocess.run([tether, "run", "-s", s, "--norc", "--", "true"], env=env, check=True)
    enter("n")
    m = Mcp()
    for s in ["mo", "mn", "ms"]:
        m.run(s, "true")
    r = m.run("mn", "bash --norc")
    assert r["status"] == "entered_shell", r
    for _ in range(20):
        timed(cli("o")), timed(cli("n")), timed_mcp(m, "mo", 0), timed_mcp(m, "mn", 1)
    for _ in range(rounds):
        own["cli two"].append(timed(cli("o")))
        samples["cli two"].append(timed(cli("n")))
        own["mcp two"].append(timed_mcp(m, "mo", 0))
        samples["mcp two"].append(timed_mcp(m, "mn", 1))
    # One session each (`s` for the CLI, `ms` for MCP): blocks in and out.
    for _ in range(max(1, rounds // block)):
        for _ in range(block):
            own["cli one"].append(timed(cli("s")))
            own["mcp one"].append(timed_mcp(m, "ms", 0))
        enter("s")
        r = m.run("ms", "bash --norc")
        assert r["status"] == "entered_shell", r
        for _ in range(block):
            samples["cli one"].append(timed(cli("s")))
            samples["mcp one"].append(timed_mcp(m, "ms", 1))
        leave("s")
        r = m.run("ms", "exit")
        assert r["nest_change"] == "returned", r
    m.close()
    subprocess.run([tether, "daemon", "stop"], env=env, stderr=subprocess.DEVNULL)
    names = {
        "cli two": "tether run -- true, two sessions",
        "cli one": f"tether run -- true, one session, blocks of {block}",
        "mcp two": "mcp shell_run true, two sessions",
        "mcp one": f"mcp shell_run true, one session, blocks of {block}",
    }
    print(f"{rounds} calls each, interleaved; ms (median, p90)")
    print(f"{'':46} {'own bash':>16} {'in bash --norc':>16}  nested / own")
    for k, name in names.items():
        a, b = sorted(own[k]), sorted(samples[k])
        ma, mb = statistics.median(a), statistics.median(b)
        print(f"{name:46} {ma:7.3f} {a[int(len(a) * 0.9)]:7.3f}  {mb:7.3f} {b[int(len(b) * 0.9)]:7.3f}  {mb / ma:.3f}x")


if nested:
    nested_bench()
    sys.exit(0)

peers = {
    "tether run -s b -- true (warm daemon)": [tether, "run", "-s", "b", "--", "true"],
    "bash -c true": ["bash", "-c", "true"],
    "tether run --once --norc -- true": [tether, "run", "--once", "--norc", "--", "true"],
}
subprocess.run([tether, "run", "-s", "b", "--norc", "--", "true"], env=env, check=True)
for _ in range(20):
    for argv in peers.values():
        timed(argv)
samples = {name: [] for name in peers}
for _ in range(rounds):
    for name, argv in peers.items():
        samples[name].append(timed(argv))
subprocess.run([tether, "daemon", "stop"], env=env, stderr=subprocess.DEVNULL)
base = statistics.median(samples["bash -c true"])
print(f"{rounds} rounds, interleaved; ms")
for name, s in samples.items():
    s.sort()
    med = statistics.median(s)
    print(f"{name:42} median {med:6.2f}  p90 {s[int(len(s) * 0.9)]:6.2f}  ({med / base:.2f}x bash -c true)")
