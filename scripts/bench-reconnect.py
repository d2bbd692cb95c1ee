#!/usr/bin/env python3
"""Time from a link coming back to the host's new output on the person's
screen: `tether ssh --keep HOST` beside mosh, on the same dropped veth, in
one run, rounds interleaved.

A host in a network namespace joined by a veth pair runs sshd (key-only,
UsePAM no) and, for mosh, Debian's mosh-server. On it a loop prints the
time every 0.1 s. Each round: the output is flowing; the veth is set down
(packets stop, no FIN) for DOWN seconds; it is set up at T0; the figure is
the time from T0 until the client's terminal (a PTY this script reads)
shows a line the host printed after the link went down.

tether's figure includes its wait between tries (0.25 s doubling to
`reconnect_max`, 2 s by default: RECONNECT_MAX sets it for this run) and
the time it takes to notice a silent link (a round trip after 2 s of
silence, answered within 3 s), which a drop longer than 5 s hides.

OFFLINE=1 adds an `unreachable` route for the host's subnet under the
veth's, so that while the veth is down a connection fails at once with
"network unreachable", as on a laptop whose network is gone (without it,
this machine's default route carries the tries elsewhere, where they fail
in the SSH handshake and the waits grow).

Needs root (a network namespace, sshd, another user), `ip`, sshd and mosh.

usage: scripts/bench-reconnect.py [TETHER] [ROUNDS] [DOWN_SECONDS] [USER]
"""
import fcntl
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time

args = sys.argv[1:]
tether = os.path.abspath(args[0] if args else "target/release/tether")
rounds = int(args[1]) if len(args) > 1 else 5
down_s = float(args[2]) if len(args) > 2 else 6.0
user = args[3] if len(args) > 3 else "tether-test"
d = tempfile.mkdtemp(prefix="tether-bench-reconnect-")
os.chmod(d, 0o755)
ns, near, far_dev = f"tbr{os.getpid()}", f"tbrn{os.getpid() % 10000}", f"tbrf{os.getpid() % 10000}"
near_ip, far_ip = "10.213.7.1", "10.213.7.2"
port = 2222


def sh(*cmd, check=True):
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


def link(state):
    sh("ip", "link", "set", near, state)


procs = []


def cleanup():
    for p in procs:
        try:
            os.killpg(p.pid, 9)
        except OSError:
            pass
    sh("ip", "link", "del", near, check=False)
    sh("ip", "route", "del", "unreachable", "10.213.7.0/24", check=False)
    sh("ip", "netns", "del", ns, check=False)
    # The host's daemon and mosh-server outlive their clients: every
    # process this run's sshd started carries its cache in the environment.
    mark = f"XDG_CACHE_HOME={d}/cache".encode()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if mark in open(f"/proc/{pid}/environ", "rb").read().split(b"\0"):
                os.kill(int(pid), 9)
        except OSError:
            pass


# The host: a namespace, its veth, sshd in it.
sh("ip", "netns", "add", ns)
try:
    sh("ip", "link", "add", near, "type", "veth", "peer", "name", far_dev)
    sh("ip", "link", "set", far_dev, "netns", ns)
    sh("ip", "addr", "add", f"{near_ip}/30", "dev", near)
    link("up")
    if os.environ.get("OFFLINE") == "1":
        sh("ip", "route", "add", "unreachable", "10.213.7.0/24")
    for a in (["addr", "add", f"{far_ip}/30", "dev", far_dev], ["link", "set", far_dev, "up"], ["link", "set", "lo", "up"]):
        sh("ip", "netns", "exec", ns, "ip", *a)
    shadow = sh("getent", "shadow", user).stdout
    if shadow.split(":")[1:2] == ["!"]:
        sh("usermod", "-p", "*", user)
    sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{d}/host")
    sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{d}/id")
    shutil.copy(f"{d}/id.pub", f"{d}/authorized_keys")
    os.chmod(f"{d}/authorized_keys", 0o644)
    os.makedirs("/run/sshd", exist_ok=True)
    hostd, cache = f"{d}/hostd", f"{d}/cache"
    for p in (hostd, cache):
        os.makedirs(p, mode=0o700)
        shutil.chown(p, user)
    with open(f"{d}/sshd_config", "w") as f:
        f.write(f"ListenAddress {far_ip}:{port}\nHostKey {d}/host\nPidFile {d}/sshd.pid\nAuthorizedKeysFile {d}/authorized_keys\n"
                "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nLogLevel ERROR\n"
                f"SetEnv TETHER_DIR={hostd} XDG_CACHE_HOME={cache} LANG=C.UTF-8\n")
    procs.append(subprocess.Popen(["ip", "netns", "exec", ns, "/usr/sbin/sshd", "-D", "-f", f"{d}/sshd_config", "-E", f"{d}/sshd.log"],
                                  start_new_session=True))
    host_key = " ".join(open(f"{d}/host.pub").read().split()[:2])
    home = f"{d}/home"
    os.makedirs(f"{home}/.ssh", mode=0o700)
    os.makedirs(f"{home}/.config/tether")
    cap = os.environ.get("RECONNECT_MAX")
    with open(f"{home}/.config/tether/config.toml", "w") as f:
        f.write(f"[defaults]\nreconnect_max = {cap}\n" if cap else "")
    with open(f"{home}/.ssh/known_hosts", "w") as f:
        f.write(f"[{far_ip}]:{port} {host_key}\n")
    with open(f"{home}/.ssh/config", "w") as f:
        f.write(f"Host far\n  HostName {far_ip}\n  Port {port}\n  User {user}\n  IdentityFile {d}/id\n  IdentitiesOnly yes\n"
                f"  IdentityAgent none\n  UserKnownHostsFile {home}/.ssh/known_hosts\n  StrictHostKeyChecking yes\n  BatchMode yes\n")
    deadline = time.time() + 10
    while sh("ip", "netns", "exec", ns, "bash", "-c", f"exec 3<>/dev/tcp/{far_ip}/{port}", check=False).returncode and time.time() < deadline:
        time.sleep(0.05)

    env = {"HOME": home, "PATH": os.environ["PATH"], "TERM": "xterm-256color", "LANG": "C.UTF-8",
           "TETHER_DIR": f"{d}/local"}
    loop = "while :; do date +%s.%N; sleep 0.1; done"

    class Client:
        """A program in a PTY; every byte it writes, with its arrival time."""

        def __init__(self, argv):
            pid, fd = pty.fork()
            if pid == 0:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
                os.execvpe(argv[0], argv, env)
            self.pid, self.fd, self.got, self.lock = pid, fd, [], threading.Lock()
            threading.Thread(target=self.read, daemon=True).start()

        def read(self):
            while True:
                try:
                    b = os.read(self.fd, 65536)
                except OSError:
                    return
                if not b:
                    return
                with self.lock:
                    self.got.append((time.time(), b))

        def type(self, text):
            os.write(self.fd, text.encode())

        def after(self, t):
            with self.lock:
                return b"".join(b for at, b in self.got if at >= t)

        def first_stamp_after(self, since, newer_than, deadline):
            """When a line printed after `newer_than` arrived (at or after
            `since`); None by `deadline`."""
            while time.time() < deadline:
                with self.lock:
                    chunks = [(at, b) for at, b in self.got if at >= since]
                seen = b""
                for at, b in chunks:
                    seen += b
                    if any(float(s) > newer_than for s in re.findall(rb"\d{10}\.\d{6}", seen)):
                        return at
                time.sleep(0.005)
            return None

        def end(self):
            try:
                os.kill(self.pid, 9)
            except OSError:
                pass

    def flowing(c, secs=30):
        t = time.time()
        if c.first_stamp_after(t, t, t + secs) is None:
            sys.exit(f"no output flowing; saw {c.after(0)[-400:]!r}")

    clients = {}
    t = Client([tether, "ssh", "--keep", "far"])
    time.sleep(0.5)
    t.type(loop + "\r")
    flowing(t, 60)
    clients["tether ssh --keep"] = t
    m = Client(["mosh", "--ssh=ssh -F " + f"{home}/.ssh/config", "--predict=never",
                "--server=LANG=C.UTF-8 mosh-server", "far", "--", "sh", "-c", loop])
    flowing(m, 60)
    clients["mosh"] = m

    trace = os.environ.get("BENCH_TRACE") == "1"
    events = []

    def tail_log():
        # BENCH_TRACE=1: the local daemon's log lines, timed, beside the
        # link's changes (to see where the time goes).
        seen = 0
        while True:
            try:
                data = open(f"{d}/local/daemon.log", "rb").read()
            except OSError:
                data = b""
            for line in data[seen:].splitlines():
                events.append((time.time(), line.decode(errors="replace")))
            seen = len(data)
            time.sleep(0.01)

    if trace:
        threading.Thread(target=tail_log, daemon=True).start()
    figures = {name: [] for name in clients}
    for r in range(rounds):
        for name, c in clients.items():
            flowing(c)
            went = time.time()
            link("down")
            time.sleep(down_s)
            t0 = time.time()
            link("up")
            at = c.first_stamp_after(t0, went, t0 + 60)
            if trace:
                for when, text in events:
                    if when >= went:
                        print(f"  {when - t0:+.3f} s after up: {text}")
                events.clear()
            figures[name].append(None if at is None else at - t0)
            print(f"round {r + 1} {name}: {'never' if at is None else f'{(at - t0) * 1000:.0f} ms'}", flush=True)
    print(f"\nlink down {down_s:.0f} s, {rounds} rounds, interleaved; time from the link up to the host's new output on screen")
    med = {}
    for name, xs in figures.items():
        ok = sorted(x for x in xs if x is not None)
        med[name] = ok[len(ok) // 2] if ok else None
        print(f"  {name}: median {med[name] * 1000:.0f} ms (min {ok[0] * 1000:.0f}, max {ok[-1] * 1000:.0f})" if ok else f"  {name}: never")
    if med.get("tether ssh --keep") and med.get("mosh"):
        print(f"  tether / mosh: {med['tether ssh --keep'] / med['mosh']:.2f}x")
    for c in clients.values():
        c.end()
finally:
    cleanup()
