#!/usr/bin/env python3
"""End-to-end latency of `tether run -s b -- true` with a warm daemon (CLI
process start, daemon round trip, the command, exit), beside `bash -c true`
and `tether run --once`, interleaved in one run.

usage: scripts/bench-cli.py [TETHER_BINARY] [ROUNDS]   (default target/release/tether, 300)
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

tether = sys.argv[1] if len(sys.argv) > 1 else "target/release/tether"
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 300
env = dict(os.environ, TETHER_DIR=tempfile.mkdtemp(prefix="tether-bench-"))
env.pop("XDG_RUNTIME_DIR", None)

def timed(argv):
    t = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - t) * 1000

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
