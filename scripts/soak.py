"""Soak: many sessions, many commands, a daemon SIGKILL and restart in the
middle, and MCP servers killed at random, with every command counted.

Each command appends its own id to its session's ledger file and prints
it. Afterwards, for every command:
  - an `exited` result must have exit code 0, print its id, and its id must
    be in the ledger exactly once;
  - a result that is not `exited` must be one that says what is known (the
    daemon stopped during the call: "may have run"; a session closed or
    lost), and its id may be in the ledger at most once;
  - no id is ever in a ledger twice (nothing is run twice).
Then: no process of the test's sessions is left (by the sessions' marker
variable, TETHER_SESSION_ID, in /proc), and the daemon's RSS before and
after.

Usage: python3 scripts/soak.py target/release/tether [SESSIONS] [COMMANDS] [SECONDS]
Defaults: 50 sessions x 200 commands, at most 600 s. Prints a summary and
exits non-zero when a check fails.
"""

import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

TETHER = os.path.abspath(sys.argv[1])
SESSIONS = int(sys.argv[2]) if len(sys.argv) > 2 else 50
COMMANDS = int(sys.argv[3]) if len(sys.argv) > 3 else 200
BOUND = float(sys.argv[4]) if len(sys.argv) > 4 else 600.0
WORKERS = 8
MCP_SERVERS = 4

root = tempfile.mkdtemp(prefix="tether-soak-")
os.chmod(root, 0o700)
ENV = dict(os.environ, TETHER_DIR=os.path.join(root, "d"), TETHER_IDLE_EXIT="120")
ENV.pop("XDG_RUNTIME_DIR", None)
LEDGERS = os.path.join(root, "ledgers")
os.makedirs(LEDGERS)
failures = []
results = []  # (session, id, kind, detail)
lock = threading.Lock()


def fail(what):
    with lock:
        failures.append(what)


def tether(*args, **kw):
    return subprocess.run([TETHER, *args], env=ENV, capture_output=True, text=True, **kw)


def daemon_pid():
    m = re.search(r"\(pid (\d+)\)", tether("daemon", "status").stdout)
    return int(m.group(1)) if m else None


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None


def command(session, cid):
    ledger = os.path.join(LEDGERS, session)
    return f"echo {cid} >> {ledger}; echo {cid}"


def cli_worker(sessions, stop_at):
    for i in range(COMMANDS):
        for s in sessions:
            if time.monotonic() > stop_at:
                return
            cid = f"{s}-{i}"
            out = tether("run", "-s", s, "--norc", "--json", "--timeout", "30", "--", command(s, cid))
            if out.returncode in (0,) or out.stdout.strip().startswith("{"):
                try:
                    r = json.loads(out.stdout)
                except ValueError:
                    fail(f"{cid}: unreadable result {out.stdout!r} {out.stderr!r}")
                    continue
                with lock:
                    results.append((s, cid, r["status"], r))
            else:
                with lock:
                    results.append((s, cid, "error", out.stderr.strip()))


class Mcp:
    """A `tether mcp` driven with raw JSON-RPC lines (killed at random)."""

    def __init__(self):
        self.p = subprocess.Popen([TETHER, "mcp", "--norc"], env=ENV, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.id = 0
        self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "soak", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, obj):
        self.p.stdin.write((json.dumps(obj) + "\n").encode())
        self.p.stdin.flush()

    def call(self, method, params):
        self.id += 1
        self.send({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params})
        line = self.p.stdout.readline()
        if not line:
            raise EOFError("server gone")
        return json.loads(line)


def mcp_worker(n, stop_at):
    rng = random.Random(n)
    life = 0
    while time.monotonic() < stop_at and life < 8:
        life += 1
        session = f"mcp{n}"
        try:
            m = Mcp()
        except (EOFError, OSError, ValueError) as e:
            fail(f"mcp{n}: could not start: {e}")
            return
        killer = None
        if rng.random() < 0.7:
            killer = threading.Timer(rng.uniform(0.2, 2.0), m.p.kill)
            killer.start()
        for i in range(COMMANDS):
            if time.monotonic() > stop_at:
                break
            cid = f"{session}-{life}-{i}"
            try:
                r = m.call("tools/call", {"name": "shell_run", "arguments": {
                    "command": command(session + f"-{life}", cid), "session": "main"}})
            except (EOFError, OSError, ValueError):
                with lock:
                    results.append((f"{session}-{life}", cid, "killed", "server killed mid-call"))
                break
            res = r.get("result", {})
            sc = res.get("structuredContent")
            with lock:
                if sc:
                    results.append((f"{session}-{life}", cid, sc["status"], sc))
                else:
                    text = "".join(c.get("text", "") for c in res.get("content", []))
                    results.append((f"{session}-{life}", cid, "error", text or json.dumps(r)))
        if killer:
            killer.cancel()
        m.p.kill()
        m.p.wait()


def check():
    ledgers = {}
    for name in os.listdir(LEDGERS):
        with open(os.path.join(LEDGERS, name)) as f:
            for line in f:
                ledgers.setdefault(line.strip(), 0)
                ledgers[line.strip()] += 1
    twice = [k for k, v in ledgers.items() if v > 1]
    if twice:
        fail(f"run twice: {twice[:10]}")
    kinds = {}
    for s, cid, kind, detail in results:
        kinds[kind] = kinds.get(kind, 0) + 1
        seen = ledgers.get(cid, 0)
        if kind == "exited":
            if detail.get("exit_code") != 0 or cid not in detail.get("output", ""):
                fail(f"{cid}: exited but {detail}")
            if seen != 1:
                fail(f"{cid}: exited, in the ledger {seen} times")
        elif kind == "error":
            if not re.search(r"may have run|was lost|was closed|stopped", str(detail)):
                fail(f"{cid}: an error that does not say what is known: {detail}")
        elif kind in ("killed", "closed"):
            pass
        else:
            fail(f"{cid}: unexpected status {kind}: {detail}")
    return kinds, len(ledgers)


def marked_processes():
    """Processes carrying a session marker of this soak's daemons."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if any(e.startswith(b"TETHER_SESSION_ID=") for e in env) and any(
                e == f"TETHER_DIR={ENV['TETHER_DIR']}".encode() for e in env):
            found.append(int(pid))
    return found


def main():
    t0 = time.monotonic()
    stop_at = t0 + BOUND
    tether("run", "-s", "warm", "--norc", "--", "true")
    pid0 = daemon_pid()
    rss0 = rss_kib(pid0)
    names = [f"s{i:02d}" for i in range(SESSIONS)]
    threads = [threading.Thread(target=cli_worker, args=(names[w::WORKERS], stop_at)) for w in range(WORKERS)]
    threads += [threading.Thread(target=mcp_worker, args=(n, stop_at)) for n in range(MCP_SERVERS)]
    for t in threads:
        t.start()
    # The daemon SIGKILLed in the middle: once half the CLI commands have
    # answered (the next call starts another daemon).
    half = SESSIONS * COMMANDS // 2
    while len(results) < half and any(t.is_alive() for t in threads):
        time.sleep(0.005)
    rss_at_kill = rss_kib(pid0)
    os.kill(pid0, signal.SIGKILL)
    killed_at = time.monotonic() - t0
    answered_at_kill = len(results)
    for t in threads:
        t.join()
    pid1 = daemon_pid()
    rss1 = rss_kib(pid1) if pid1 else None
    tether("daemon", "stop")
    deadline = time.monotonic() + 10
    while marked_processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    left = marked_processes()
    if left:
        fail(f"processes left behind: {left}")
    kinds, ledger_ids = check()
    wall = time.monotonic() - t0
    print(f"soak: {SESSIONS} CLI sessions x {COMMANDS} commands ({WORKERS} clients) + {MCP_SERVERS} MCP servers killed at random; daemon SIGKILLed at {killed_at:.1f} s, after {answered_at_kill} results")
    print(f"soak: {len(results)} results {dict(sorted(kinds.items()))}; {ledger_ids} ledger lines; wall {wall:.1f} s")
    print(f"soak: daemon RSS {rss0} KiB (pid {pid0}, one session) -> {rss_at_kill} KiB (the same daemon with every session, when killed); the next daemon {rss1} KiB (pid {pid1}) after the run")
    print(f"soak: processes left behind: {len(left)}")
    if failures:
        print(f"soak: {len(failures)} FAILURES")
        for f in failures[:30]:
            print("  ", f)
        sys.exit(1)
    print("soak: every command ran at most once, every exited result is in its ledger once, nothing left behind")


main()
