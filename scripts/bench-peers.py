#!/usr/bin/env python3
"""Benchmark the per-command latency of the "peer" ways of running shell commands.

tether's own benchmark binary runs this script as a subprocess, in the same
run, so that its numbers can be set next to the tools that agent harnesses
use today on the same machine and under the same load.  Three things are
measured, each as per-call wall-clock latency (``time.perf_counter_ns``)
reported in milliseconds as median, p90, p99, mean and n:

``spawn``
    ``subprocess.run(["bash", "--norc", "--noprofile", "-c", "true"])`` --
    the cost of a brand-new shell per command (what a harness pays if it
    keeps no persistent shell).  Runs ``--calls / 5`` times (at least 1),
    after 5 unmeasured warm-up runs.

``pexpect_nodelay``
    A persistent ``bash --norc --noprofile`` driven by pexpect
    (``pexpect.spawn('bash', ['--norc', '--noprofile'], encoding='utf-8',
    echo=False)``), with ``PS1='__PEXPECT_PROMPT_$?__ '``, ``PS2`` empty and
    ``PROMPT_COMMAND`` unset, and ``child.delaybeforesend = None``.  Each
    call is ``sendline('true')`` followed by
    ``expect(r'__PEXPECT_PROMPT_(\\d+)__ ')``.  This is the bare floor of the
    "marker in PS1" approach: no nonce, no output capture beyond the match,
    none of the safety a real harness needs.  Runs ``--calls`` times.

``pexpect_default_delay``
    The same, but with pexpect's default ``delaybeforesend`` (0.05 s), which
    is how Python agent harnesses ship.  Each call costs ~50 ms, so it runs
    ``--calls / 20`` times (at least 20).

Each persistent shell is warmed up with 20 unmeasured calls.  ``HISTFILE`` is
unset in the persistent shells so that closing them does not write
``~/.bash_history``; nothing else about bash's defaults is changed.

Percentiles use linear interpolation between closest ranks (numpy's default,
``statistics.quantiles(method='inclusive')``).

If ``pexpect`` is not importable, the script creates a venv at
``<repo>/target/bench-venv``, ``pip install``s pexpect into it and re-execs
itself with that venv's python, so ``python3 scripts/bench-peers.py`` works on
a fresh machine with access to PyPI.  With ``--json`` exactly one JSON object
is printed on stdout::

    {"spawn": {...}, "pexpect_nodelay": {...}, "pexpect_default_delay": {...},
     "python": "<version>", "pexpect": "<version>"}

All progress (and pip's output) goes to stderr.  Child shells are always
closed with ``close(force=True)``, also on errors and on SIGTERM/SIGHUP.
"""

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(REPO, "target", "bench-venv")
REEXEC_ENV = "TETHER_BENCH_PEERS_REEXEC"

BASH_ARGS = ["--norc", "--noprofile"]
PROMPT_RE = r"__PEXPECT_PROMPT_(\d+)__ "
WARMUP = 20
EXPECT_TIMEOUT = 10  # seconds, per expect()


def log(msg):
    print(f"bench-peers: {msg}", file=sys.stderr, flush=True)


def ensure_pexpect():
    """Import pexpect, bootstrapping a venv and re-exec'ing if needed."""
    try:
        import pexpect  # noqa: F401

        return
    except ImportError:
        pass
    if os.environ.get(REEXEC_ENV):
        sys.exit(f"bench-peers: pexpect still not importable after re-exec with {sys.executable}")
    py = os.path.join(VENV, "bin", "python")
    if not os.path.exists(py):
        log(f"pexpect not importable; creating venv {VENV}")
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True, stdout=sys.stderr)
    probe = subprocess.run([py, "-c", "import pexpect"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if probe.returncode != 0:
        log("installing pexpect into the venv")
        subprocess.run(
            [py, "-m", "pip", "install", "--disable-pip-version-check", "-q", "pexpect"],
            check=True,
            stdout=sys.stderr,
        )
    log(f"re-exec with {py}")
    sys.stdout.flush()
    sys.stderr.flush()
    env = dict(os.environ, **{REEXEC_ENV: "1"})
    os.execve(py, [py, os.path.abspath(__file__), *sys.argv[1:]], env)


def percentile(sorted_vals, q):
    """Linear interpolation between closest ranks (numpy default)."""
    if len(sorted_vals) == 1:
        return sorted_vals[0]
    pos = (len(sorted_vals) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)


def summarize(samples_ns):
    ms = sorted(s / 1e6 for s in samples_ns)
    return {
        "median": percentile(ms, 0.5),
        "p90": percentile(ms, 0.9),
        "p99": percentile(ms, 0.99),
        "mean": sum(ms) / len(ms),
        "n": len(ms),
    }


def bench_spawn(n):
    cmd = ["bash", *BASH_ARGS, "-c", "true"]
    kw = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    for _ in range(5):
        subprocess.run(cmd, **kw)
    samples = []
    for _ in range(n):
        t0 = time.perf_counter_ns()
        subprocess.run(cmd, **kw)
        samples.append(time.perf_counter_ns() - t0)
    return samples


DEFAULT = object()  # leave pexpect's own delaybeforesend untouched


def bench_pexpect(n, delaybeforesend, children):
    import pexpect

    child = pexpect.spawn("bash", BASH_ARGS, encoding="utf-8", echo=False, timeout=EXPECT_TIMEOUT)
    children.append(child)
    # The echoed setup line contains the literal `$?`, not digits, so only the
    # real prompt drawn after it can match PROMPT_RE.
    default_delay = child.delaybeforesend
    child.delaybeforesend = None
    child.sendline("PS1='__PEXPECT_PROMPT_$?__ '; PS2=''; unset PROMPT_COMMAND HISTFILE")
    child.expect(PROMPT_RE)
    child.delaybeforesend = default_delay if delaybeforesend is DEFAULT else delaybeforesend
    if delaybeforesend is DEFAULT:
        log(f"  pexpect default delaybeforesend = {default_delay!r}")

    def call():
        child.sendline("true")
        child.expect(PROMPT_RE)
        if child.match.group(1) != "0":
            raise RuntimeError(f"`true` exited {child.match.group(1)}")

    for _ in range(WARMUP):
        call()
    samples = []
    for _ in range(n):
        t0 = time.perf_counter_ns()
        call()
        samples.append(time.perf_counter_ns() - t0)
    child.close(force=True)
    children.remove(child)
    return samples


def print_table(result):
    rows = [("spawn", "fresh bash -c true"), ("pexpect_nodelay", "delaybeforesend=None"),
            ("pexpect_default_delay", "delaybeforesend=0.05")]
    print(f"python {result['python']}, pexpect {result['pexpect']}; latency per call in ms")
    print(f"{'case':<24}{'median':>10}{'p90':>10}{'p99':>10}{'mean':>10}{'n':>7}  note")
    for key, note in rows:
        s = result[key]
        print(f"{key:<24}{s['median']:>10.3f}{s['p90']:>10.3f}{s['p99']:>10.3f}{s['mean']:>10.3f}{s['n']:>7}  {note}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=1000, help="calls for pexpect_nodelay (default 1000)")
    ap.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    args = ap.parse_args()
    if args.calls < 1:
        ap.error("--calls must be >= 1")

    ensure_pexpect()
    import pexpect

    def on_signal(signum, _frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)

    n_spawn = max(1, args.calls // 5)
    n_delay = max(20, args.calls // 20)
    children = []
    try:
        log(f"spawn: {n_spawn} runs")
        spawn = summarize(bench_spawn(n_spawn))
        log(f"pexpect_nodelay: {WARMUP} warm-up + {args.calls} calls")
        nodelay = summarize(bench_pexpect(args.calls, None, children))
        log(f"pexpect_default_delay: {WARMUP} warm-up + {n_delay} calls")
        default_delay = summarize(bench_pexpect(n_delay, DEFAULT, children))
    finally:
        for child in children:
            try:
                child.close(force=True)
            except Exception:
                pass

    result = {
        "spawn": spawn,
        "pexpect_nodelay": nodelay,
        "pexpect_default_delay": default_delay,
        "python": platform.python_version(),
        "pexpect": pexpect.__version__,
    }
    if args.json:
        print(json.dumps(result))
    else:
        print_table(result)


if __name__ == "__main__":
    main()
