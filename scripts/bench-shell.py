#!/usr/bin/env python3
"""`tether shell` (issue 13): a line broadcast to many nodes, from Enter to
the next prompt, beside ClusterShell's interactive mode (`clush -w NODES`,
one ssh per node per line) and beside one persistent remote shell
(`tether run --host node1 -- true`), interleaved in one run; and the memory
of 100 node sessions (the client's peak RSS, the daemon's growth).

Starts real sshd on 127.0.0.2 ... (one port, one host key, key-only auth,
UsePAM no; as scripts/bench-exec.py) and logs in as a plain user with a
clean start-up (default tether-test, /bin/sh, no rc files). tether's
daemon reads a private HOME's ~/.ssh/config (one Host per node: HostName,
Port, User, IdentityFile, UserKnownHostsFile, IdentityAgent none), as the
tests do; clush reads the same file with `-o -F FILE`, plus
`KexAlgorithms curve25519-sha256` (the key exchange tether negotiates).
Both programs run in a PTY this script owns, with NO_COLOR=1. Needs root
(sshd on many addresses, another user), sshd and clustershell.

TETHER_B=/path/to/other/tether adds a second build (its own daemon, its own
`tether shell`), interleaved in the same rounds, to compare two versions.
BENCH_REMOTE_TMPFS=1 puts the remote shells' session directories on tmpfs
(sshd `SetEnv XDG_RUNTIME_DIR=...`; without it they are in the host's /tmp,
as on a host without a login session's runtime directory).

usage: scripts/bench-shell.py [TETHER] [NODES] [LINES] [USER]
         (NODES sshd, node1 ... nodeN; LINES of `true`, then of `hostname`)
       scripts/bench-shell.py --stream [TETHER] [NODES] [LINES]
         (LINES of a 3-second command printing a line every 100 ms on each
         node: the daemon's and the client's CPU per line, per build)
       scripts/bench-shell.py --memory [TETHER] [USER]
         (10 sshd x 10 aliases: n001 ... n100; the `tether shell` client's
         VmHWM after its first line, the daemon's VmRSS before and after)
"""
import fcntl
import os
import re
import select
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time

memory = sys.argv[1:2] == ["--memory"]
stream = sys.argv[1:2] == ["--stream"]
args = sys.argv[2:] if memory or stream else sys.argv[1:]
tether = os.path.abspath(args[0] if args else "target/release/tether")
if memory:
    n_sshd, per_sshd = 10, 10
    lines = 0
    user = args[1] if len(args) > 1 else "tether-test"
else:
    n_sshd, per_sshd = (int(args[1]) if len(args) > 1 else 50), 1
    lines = int(args[2]) if len(args) > 2 else (10 if stream else 100)
    user = args[3] if len(args) > 3 else "tether-test"
# --stream's line: 30 lines, one every 100 ms, on every node.
STREAM_CMD = "for i in $(seq 1 30); do echo tick$i; sleep 0.1; done"
KEX = "curve25519-sha256"
remote_tmpfs = os.environ.get("BENCH_REMOTE_TMPFS") == "1"
d = tempfile.mkdtemp(prefix="tether-bench-shell-", dir="/dev/shm")
ips = [f"127.0.0.{i}" for i in range(2, 2 + n_sshd)]
if memory:
    nodes = [f"n{i:03}" for i in range(1, 1 + n_sshd * per_sshd)]
    node_expr = f"n[001-{len(nodes):03}]"
else:
    nodes = [f"node{i}" for i in range(1, 1 + n_sshd)]
    node_expr = f"node[1-{n_sshd}]"
address = {name: ips[i % n_sshd] for i, name in enumerate(nodes)}


# --- the sshd fleet (as scripts/bench-exec.py) ---

def free_port():
    while True:
        s = socket.socket()
        s.bind((ips[0], 0))
        port = s.getsockname()[1]
        s.close()
        ok = True
        for ip in ips:
            t = socket.socket()
            try:
                t.bind((ip, port))
            except OSError:
                ok = False
            t.close()
        if ok:
            return port


def start_fleet():
    """Starts one sshd per address; returns (port, processes)."""
    # With UsePAM no, sshd refuses accounts whose password field is locked ("!").
    shadow = subprocess.run(["getent", "shadow", user], capture_output=True, text=True).stdout
    if shadow.split(":")[1:2] == ["!"]:
        subprocess.run(["usermod", "-p", "*", user], check=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{d}/host"], check=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{d}/id"], check=True)
    shutil.copy(f"{d}/id.pub", f"{d}/authorized_keys")
    # sshd reads authorized_keys as the user logging in.
    os.chmod(d, 0o755)
    os.chmod(f"{d}/authorized_keys", 0o644)
    os.makedirs("/run/sshd", exist_ok=True)
    port = free_port()
    host_key = " ".join(open(f"{d}/host.pub").read().split()[:2])
    with open(f"{d}/known_hosts", "w") as f:
        for ip in ips:
            f.write(f"[{ip}]:{port} {host_key}\n")
    extra = ""
    if remote_tmpfs:
        # The remote shells' session directories on tmpfs instead of the
        # host's /tmp (tether uses $XDG_RUNTIME_DIR/tether when it is set).
        runtime = f"{d}/runtime"
        os.makedirs(runtime, mode=0o700)
        shutil.chown(runtime, user)
        extra = f"SetEnv XDG_RUNTIME_DIR={runtime}\n"
    procs = []
    for ip in ips:
        cfg = f"{d}/sshd_{ip}"
        with open(cfg, "w") as f:
            f.write(f"ListenAddress {ip}:{port}\nHostKey {d}/host\nPidFile {d}/pid_{ip}\nAuthorizedKeysFile {d}/authorized_keys\n"
                    "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nLogLevel ERROR\nMaxStartups 500\n"
                    + extra)
        procs.append(subprocess.Popen(["/usr/sbin/sshd", "-D", "-f", cfg, "-E", f"{d}/log_{ip}"]))
    for ip in ips:
        deadline = time.time() + 10
        while True:
            try:
                socket.create_connection((ip, port), timeout=1).close()
                break
            except OSError:
                if time.time() > deadline:
                    for p in procs:
                        p.terminate()
                    sys.exit(f"sshd on {ip} did not start")
                time.sleep(0.01)
    return port, procs


def write_ssh_config(path, port, kex=None):
    """One Host per node (as crates/tether/tests/common/remote.rs)."""
    with open(path, "w") as f:
        for name in nodes:
            f.write(f"Host {name}\n  HostName {address[name]}\n  Port {port}\n  User {user}\n"
                    f"  IdentityFile {d}/id\n  IdentitiesOnly yes\n  IdentityAgent none\n"
                    f"  UserKnownHostsFile {d}/known_hosts\n  StrictHostKeyChecking yes\n  BatchMode yes\n")
            if kex:
                f.write(f"  KexAlgorithms {kex}\n")


# --- programs in a PTY ---

class Pty:
    """A program on a PTY this script owns; `expect` reads its output."""

    def __init__(self, argv, env, rows=50, cols=200):
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

        def controlling_tty():
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                                     start_new_session=True, preexec_fn=controlling_tty)
        os.close(slave)
        self.fd = master
        self.buf = b""
        self.log = open(f"{d}/pty-{os.path.basename(argv[0])}-{self.proc.pid}.log", "wb")

    def write(self, data):
        os.write(self.fd, data)

    def expect(self, pattern, timeout=60.0):
        """Reads until `pattern` (a compiled bytes regex) matches the output
        read since the last match; returns that output, up to the match's
        end."""
        deadline = time.monotonic() + timeout
        while True:
            m = pattern.search(self.buf)
            if m:
                out, self.buf = self.buf[:m.end()], self.buf[m.end():]
                return out
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{pattern.pattern!r} not seen; last output: {self.buf[-600:]!r}")
            r, _, _ = select.select([self.fd], [], [], left)
            if not r:
                continue
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                raise EOFError(f"the program ended; last output: {self.buf[-600:]!r}")
            self.log.write(chunk)
            # A terminal answers a cursor position query (line editors ask).
            if b"\x1b[6n" in chunk:
                os.write(self.fd, b"\x1b[1;1R")
            self.buf += chunk

    def close(self):
        if self.fd < 0:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        os.close(self.fd)
        self.fd = -1
        self.log.close()


def children(pid):
    """The processes whose parent is `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return found


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


def proc_status(pid, field):
    """A /proc/PID/status field in kB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def check(who, cmd, out):
    """Every node printed its one line of `hostname` (none for `true`)."""
    got = len(re.findall(rb"\r\n\w+ *: \S", out))
    want = len(nodes) if cmd == "hostname" else 0
    if got != want:
        sys.exit(f"{who}: {got} output lines for {cmd}, not {want}: {out[-600:]!r}")


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


class Tether:
    """A tether build with a daemon of its own (TETHER_DIR under /dev/shm,
    the private HOME) and, once started, its `tether shell` in a PTY."""

    def __init__(self, binary, label, home):
        self.binary, self.label = binary, label
        tdir = tempfile.mkdtemp(prefix="tether-", dir=d)
        os.chmod(tdir, 0o700)
        self.env = dict(os.environ, HOME=home, TETHER_DIR=tdir, TETHER_IDLE_EXIT="600", NO_COLOR="1")
        for k in ("SSH_AUTH_SOCK", "XDG_CONFIG_HOME"):
            self.env.pop(k, None)
        self.sh = None
        subprocess.run([binary, "daemon", "start"], env=self.env, check=True)
        self.daemon_pid = None
        for _ in range(200):
            st = subprocess.run([binary, "daemon", "status"], env=self.env, capture_output=True, text=True).stdout
            m = re.search(r"\(pid (\d+)\)", st)
            if m:
                self.daemon_pid = int(m.group(1))
                break
            time.sleep(0.05)
        if self.daemon_pid is None:
            sys.exit(f"{label}: the daemon did not start")

    def start_shell(self):
        """Starts `tether shell` (which runs `true` on every node, then
        draws its first prompt); returns the time that took."""
        t = time.perf_counter()
        self.sh = Pty([self.binary, "shell", "-H", node_expr], self.env)
        self.sh.expect(T_PROMPT, timeout=300)
        return time.perf_counter() - t

    def line(self, cmd):
        """One line, from Enter to the next prompt; (seconds, output)."""
        t = time.perf_counter()
        self.sh.write(cmd.encode() + b"\r")
        out = self.sh.expect(T_END)
        return time.perf_counter() - t, out

    def stop(self):
        sh, self.sh = self.sh, None
        if sh is not None:
            if sh.proc.poll() is None:
                try:
                    sh.write(b"!exit\r")
                    sh.proc.wait(30)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            sh.close()
        if self.daemon_pid is not None:
            subprocess.run([self.binary, "daemon", "stop"], env=self.env, capture_output=True)
            self.daemon_pid = None


# The end of a line in `tether shell`: the summary (every node exited 0),
# then the prompt, drawn inside one synchronized update that ends with
# \x1b[?2026l. Past six nodes the prompt folds: `[node[1-50] 50●] /home/...$ `.
T_END = re.compile(re.escape(node_expr.encode()) + rb": 0\r\n(?:(?!\r\n).)*\$ \r\x1b\[\d+C\x1b\[\?2026l", re.S)
T_PROMPT = re.compile(rb"\$ \r\x1b\[\d+C\x1b\[\?2026l")
C_PROMPT = re.compile(rb"\r\nclush> ")


def main():
    port, sshd = start_fleet()
    home = f"{d}/home"
    os.makedirs(f"{home}/.ssh")
    write_ssh_config(f"{home}/.ssh/config", port)
    write_ssh_config(f"{d}/ssh_config_clush", port, KEX)
    builds = [(tether, "tether")]
    if os.environ.get("TETHER_B"):
        builds.append((os.path.abspath(os.environ["TETHER_B"]), "tether B"))
    started = []
    cl = None
    try:
        if memory:
            # One build after the other, each with a fresh daemon.
            for binary, label in builds:
                t = Tether(binary, label, home)
                started.append(t)
                measure_memory(t)
                t.stop()
            return
        if stream:
            for binary, label in builds:
                t = Tether(binary, label, home)
                started.append(t)
                t.start_shell()
            measure_stream(started)
            return
        for binary, label in builds:
            t = Tether(binary, label, home)
            started.append(t)
            start_s = t.start_shell()
            print(f"{label}: `tether shell -H '{node_expr}'` started (true on every node, first prompt) "
                  f"in {start_s * 1000:.0f} ms")
        cl = Pty(["clush", "-f", str(len(nodes)), "-o", f"-F {d}/ssh_config_clush", "-w", node_expr],
                 started[0].env)
        cl.expect(re.compile(rb"clush> "), timeout=60)
        run = [tether, "run", "-s", "bench", "--host", nodes[0], "--", "true"]
        subprocess.run(run, env=started[0].env, check=True, capture_output=True)

        lost = {"true": 0, "hostname": 0}

        def clush_line(cmd):
            """(seconds, output), or None for a line clush did not finish
            by itself. clush forks from a thread (its task runs beside the
            readline thread), and now and then a forked child deadlocks on a
            lock inherited from the parent before it execs ssh: a `clush`
            child stuck in a futex, and clush waits for it forever. Such a
            child (not ssh after 10 s) is killed; the line is not counted."""
            t = time.perf_counter()
            cl.write(cmd.encode() + b"\r")
            killed = False
            while True:
                try:
                    out = cl.expect(C_PROMPT, timeout=1)
                except TimeoutError:
                    if time.perf_counter() - t > 10:
                        for pid in children(cl.proc.pid):
                            if comm(pid) != "ssh":
                                print(f"clush: killing its child {pid} ({comm(pid)}), "
                                      f"stuck for {time.perf_counter() - t:.0f} s on `{cmd}`", file=sys.stderr)
                                # (It may have ended meanwhile, or be the
                                # one killed a second ago, not yet reaped.)
                                try:
                                    os.kill(pid, signal.SIGKILL)
                                except ProcessLookupError:
                                    continue
                                killed = True
                    if time.perf_counter() - t > 300:
                        raise
                    continue
                if killed:
                    lost[cmd] += 1
                    return None
                return time.perf_counter() - t, out

        def run_host():
            t = time.perf_counter()
            r = subprocess.run(run, env=started[0].env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            dt = time.perf_counter() - t
            if r.returncode != 0:
                sys.exit(f"tether run --host failed ({r.returncode}): {r.stderr.decode()[:300]}")
            return dt

        results = {}
        for cmd in ("true", "hostname"):
            # One warm-up line each.
            for t in started:
                t.line(cmd)
            clush_line(cmd)
            lost[cmd] = 0
            samples = {t.label: [] for t in started}
            samples["clush"] = []
            samples["run"] = []
            for _ in range(lines):
                for t in started:
                    dt, out = t.line(cmd)
                    check(t.label, cmd, out)
                    samples[t.label].append(dt)
                got = clush_line(cmd)
                if got is not None:
                    check("clush", cmd, got[1])
                    samples["clush"].append(got[0])
                if cmd == "true":
                    samples["run"].append(run_host())
            results[cmd] = samples
        report(results, started, lost)
        cl.write(b"quit\r")
        cl.proc.wait(30)
    finally:
        # Every step, whatever failed before it.
        steps = ([cl.close] if cl is not None else []) + [t.stop for t in started]
        steps += [p.terminate for p in sshd] + [p.wait for p in sshd]
        for step in steps:
            try:
                step()
            except Exception as e:  # noqa: BLE001 (cleanup goes on)
                print(f"cleanup: {e}", file=sys.stderr)
        if os.environ.get("BENCH_KEEP"):
            print(f"kept {d}")
        else:
            shutil.rmtree(d, ignore_errors=True)


def report(results, started, lost):
    print(f"{len(nodes)} nodes ({len(nodes)} sshd), {lines} lines of each command, every peer in turn "
          f"(interleaved); clush with {KEX}; ms")
    print(f"{'line':9} {'peer':46} {'median':>8} {'p90':>8} {'p99':>8}  vs clush (median / p90)")
    for cmd, samples in results.items():
        cs = samples["clush"]
        rows = [(f"{t.label} shell -H '{node_expr}'", samples[t.label]) for t in started]
        rows.append((f"clush -f {len(nodes)} -w '{node_expr}' (interactive)", cs))
        if samples["run"]:
            rows.append((f"tether run --host {nodes[0]} -- true (1 node)", samples["run"]))
        for label, xs in rows:
            print(f"{cmd:9} {label:46} {statistics.median(xs) * 1000:8.2f} {pct(xs, 0.9) * 1000:8.2f} "
                  f"{pct(xs, 0.99) * 1000:8.2f}  {statistics.median(xs) / statistics.median(cs):.4f}x / "
                  f"{pct(xs, 0.9) / pct(cs, 0.9):.4f}x")
        if samples["run"]:
            ts, rs = samples[started[0].label], samples["run"]
            print(f"{cmd:9} tether shell ({len(nodes)} nodes) / tether run --host (1 node), median: "
                  f"{statistics.median(ts) / statistics.median(rs):.2f}x")
        if lost[cmd]:
            print(f"{cmd:9} clush hung on {lost[cmd]} lines (a forked child deadlocked before exec; killed), "
                  f"not counted: clush's figures are of {len(cs)} lines")
        if len(started) > 1:
            a, b = samples[started[0].label], samples[started[1].label]
            print(f"{cmd:9} tether / tether B, median: {statistics.median(a) / statistics.median(b):.3f}x")


def cpu_ticks(pid):
    """User plus system CPU of `pid` (with its reaped children), in clock
    ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15])


def measure_stream(started):
    """Each build's `tether shell` runs STREAM_CMD on every node, in turn,
    `lines` times: the CPU its daemon and its client used per line."""
    hz = os.sysconf("SC_CLK_TCK")
    for t in started:
        t.line("true")  # warm-up
    cpu = {t.label: {"daemon": [], "client": [], "wall": []} for t in started}
    for _ in range(lines):
        for t in started:
            d0, c0 = cpu_ticks(t.daemon_pid), cpu_ticks(t.sh.proc.pid)
            dt, out = t.line(STREAM_CMD)
            got = len(re.findall(rb"tick30\b", out))
            if got != len(nodes):
                sys.exit(f"{t.label}: tick30 from {got} nodes, not {len(nodes)}: {out[-600:]!r}")
            cpu[t.label]["daemon"].append((cpu_ticks(t.daemon_pid) - d0) / hz)
            cpu[t.label]["client"].append((cpu_ticks(t.sh.proc.pid) - c0) / hz)
            cpu[t.label]["wall"].append(dt)
    print(f"{len(nodes)} nodes, {lines} lines of `{STREAM_CMD}` per build, interleaved; "
          f"CPU seconds per line (median)")
    for t in started:
        c = cpu[t.label]
        print(f"  {t.label:10} daemon {statistics.median(c['daemon']):6.3f} s  client "
              f"{statistics.median(c['client']):6.3f} s  wall {statistics.median(c['wall']):6.3f} s")
    if len(started) > 1:
        a, b = cpu[started[0].label], cpu[started[1].label]
        for k in ("daemon", "client", "wall"):
            print(f"  tether / tether B, {k}: {statistics.median(a[k]) / statistics.median(b[k]):.3f}x")


def measure_memory(t):
    """The client's peak RSS after its first line; the daemon's RSS before
    the client started and once the node sessions exist."""
    daemon_before = proc_status(t.daemon_pid, "VmRSS")
    start_s = t.start_shell()
    pid = t.sh.proc.pid
    at_prompt = proc_status(pid, "VmHWM")
    line_s, _ = t.line("true")
    client_hwm = proc_status(pid, "VmHWM")
    client_rss = proc_status(pid, "VmRSS")
    threads = proc_status(pid, "Threads")
    anon, file = proc_status(pid, "RssAnon"), proc_status(pid, "RssFile")
    daemon_after = proc_status(t.daemon_pid, "VmRSS")
    daemon_hwm = proc_status(t.daemon_pid, "VmHWM")
    d_anon, d_file = proc_status(t.daemon_pid, "RssAnon"), proc_status(t.daemon_pid, "RssFile")
    mb = 1024 / 1e6  # kB (KiB) to MB
    print(f"{t.label}: {len(nodes)} node sessions ({n_sshd} sshd x {per_sshd} ssh_config aliases), "
          f"`tether shell -H '{node_expr}'`: started in {start_s * 1000:.0f} ms, "
          f"one line of `true` {line_s * 1000:.0f} ms")
    print(f"  client VmHWM after the first line  {client_hwm * mb:6.1f} MB ({client_hwm / 1024:.1f} MiB; "
          f"at the first prompt {at_prompt * mb:.1f} MB; VmRSS {client_rss * mb:.1f} MB: anonymous "
          f"{anon * mb:.1f}, file {file * mb:.1f}; {threads} threads)")
    print(f"  daemon VmRSS before / after        {daemon_before * mb:6.1f} / {daemon_after * mb:.1f} MB "
          f"(VmHWM {daemon_hwm * mb:.1f} MB; after: anonymous {d_anon * mb:.1f}, file {d_file * mb:.1f})")
    print(f"  daemon increase                    {(daemon_after - daemon_before) * mb:6.1f} MB "
          f"({(daemon_after - daemon_before) / len(nodes):.0f} KiB "
          f"per node session)")


if __name__ == "__main__":
    main()
