#!/usr/bin/env python3
"""What a confined session costs (issue 27), confined beside unconfined in
one run, rounds interleaved (shells started with --norc: the start-up
files of this machine are not what is measured): the start of a session (its first `tether
run -- true`, the daemon already up), the round trip of `true` in a
started session, and `git status` in a 10,000-file repository.

usage: scripts/bench-confine.py [TETHER] [ROUNDS]
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TETHER = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/tether")
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 20
MODES = [("unconfined", []), ("workspace", ["--confine", "workspace"])]

work = tempfile.mkdtemp(prefix="tether-bench-confine-")
repo = os.path.join(work, "repo")
os.makedirs(repo)
for d in range(100):
    sub = os.path.join(repo, f"d{d:03}")
    os.makedirs(sub)
    for f in range(100):
        with open(os.path.join(sub, f"f{f:03}.txt"), "w") as fh:
            fh.write(f"{d} {f}\n")
git = ["git", "-c", "user.name=b", "-c", "user.email=b@b"]
subprocess.run(git + ["init", "-q", "."], cwd=repo, check=True)
subprocess.run(git + ["add", "-A"], cwd=repo, check=True)
subprocess.run(git + ["commit", "-qm", "10k"], cwd=repo, check=True)
env = dict(os.environ, TETHER_DIR=os.path.join(work, "tdir"), TETHER_IDLE_EXIT="300")


def tether(*args):
    t0 = time.perf_counter()
    out = subprocess.run([TETHER, *args], cwd=repo, env=env, capture_output=True)
    dt = time.perf_counter() - t0
    if out.returncode != 0:
        sys.exit(f"{args}: {out.stderr.decode()}")
    return dt


tether("run", "-s", "warm", "--norc", "--", "true")
times = {m: {"start": [], "true": [], "git": []} for m, _ in MODES}
for r in range(ROUNDS):
    for mode, flags in MODES:
        s = f"{mode}-{r}"
        times[mode]["start"].append(tether("run", "-s", s, "--norc", *flags, "--", "true"))
        for _ in range(5):
            times[mode]["true"].append(tether("run", "-s", s, "--", "true"))
        times[mode]["git"].append(tether("run", "-s", s, "--", "git status --short | wc -l"))
        tether("close", "-s", s)
tether("daemon", "stop")
shutil.rmtree(work, ignore_errors=True)

med = {m: {k: statistics.median(v) * 1000 for k, v in t.items()} for m, t in times.items()}
print(f"{ROUNDS} rounds, medians in ms ({TETHER})")
print(f"{'':24} {'unconfined':>11} {'workspace':>11} {'difference':>11} {'ratio':>7}")
for key, name in [("start", "session start + true"), ("true", "round trip of true"), ("git", "git status, 10k files")]:
    a, b = med["unconfined"][key], med["workspace"][key]
    print(f"{name:24} {a:11.1f} {b:11.1f} {b - a:+11.1f} {b / a:7.2f}")
