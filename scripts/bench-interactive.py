#!/usr/bin/env python3
"""Interactive use, side by side in one run (issue 12): keystroke-to-echo
latency and output throughput of `tether ssh` against OpenSSH's `ssh -tt`
(same cipher and key exchange), and of `tether attach` against
`tmux attach`, with a bare local PTY as the floor.

The script owns a PTY per client and plays the person's terminal: it
answers tether's capture queries (DECRQM, Kitty flags, DA1), types one
byte and times until that byte comes back. Every far side runs the same
raw, echoing reader (`stty raw echo; cat > /dev/null`): the kernel of the
far PTY echoes one typed byte as one byte.

- Latency: SAMPLES keystrokes per client back to back, and SAMPLES with
  20 ms gaps; the clients take turns in blocks (interleaved, so the
  machine's noise hits all alike). Median and p99 in ms, and the CPU
  each client spent per keystroke (every thread, from
  /proc/PID/task/*/schedstat; for an attach, the daemon's or the tmux
  server's CPU too).
- Throughput: `cat` of a MIB MiB text file (lines of ~70 bytes) in the
  remote PTY (OPOST on, as a shell has it), `tether ssh` against
  `ssh -tt`, ROUNDS rounds interleaved; the script reads its PTY as fast
  as it can until an end marker. Max RSS (VmHWM) of each client.

A loopback sshd (private config, host key, known_hosts, ssh_config; key
only, `UsePAM no`) on 127.0.0.2 runs the far side as a ForceCommand, so
`tether ssh HOST` and `ssh -tt HOST` start the same program. Logs in as
`tether-test` when that user exists, else as the current user. Needs
root (sshd), sshd, ssh and tmux. State lives under /dev/shm.
BENCH_KEEP=1 keeps the state directory (sshd's debug log) afterwards.

usage: scripts/bench-interactive.py [TETHER] [SAMPLES] [MIB] [ROUNDS] [USER]
  TETHER_B=/path/to/other/tether[:/path/to/third] adds builds (B), (C), …
  (before/after), measured in the same rounds.
  BENCH_ONLY=ssh,attach,throughput picks parts.
"""
import fcntl
import os
import pty
import pwd
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

args = sys.argv[1:]
tether = os.path.abspath(args[0] if args else "target/release/tether")
samples = int(args[1]) if len(args) > 1 else 1000
mib = int(args[2]) if len(args) > 2 else 256
rounds = int(args[3]) if len(args) > 3 else 3
try:
    pwd.getpwnam("tether-test")
    default_user = "tether-test"
except KeyError:
    default_user = pwd.getpwuid(os.getuid()).pw_name
user = args[4] if len(args) > 4 else default_user
# Other builds to compare, measured in the same rounds: (B), (C), ...
others = [(f"({chr(66 + i)})", os.path.abspath(p))
          for i, p in enumerate(filter(None, os.environ.get("TETHER_B", "").split(":")))]
only = set(os.environ.get("BENCH_ONLY", "ssh,attach,throughput").split(","))
BLOCK = 50  # keystrokes per client per turn
GAP = 0.020
IP = "127.0.0.2"
CIPHER = "chacha20-poly1305@openssh.com"
KEX = "curve25519-sha256"

d = tempfile.mkdtemp(prefix="tether-bench-interactive-", dir="/dev/shm")
os.chmod(d, 0o755)
procs = []  # (label, pid) of every client started, ended at the end
cleanups = []


def log(*a):
    print(*a, flush=True)


# ---------------------------------------------------------------- sshd
def start_sshd():
    shadow = subprocess.run(["getent", "shadow", user], capture_output=True, text=True).stdout
    if shadow.split(":")[1:2] == ["!"]:
        subprocess.run(["usermod", "-p", "*", user], check=True)
    for name in ("host", "id"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{d}/{name}"], check=True)
    shutil.copy(f"{d}/id.pub", f"{d}/authorized_keys")
    os.chmod(f"{d}/authorized_keys", 0o644)
    os.makedirs("/run/sshd", exist_ok=True)
    s = socket.socket()
    s.bind((IP, 0))
    port = s.getsockname()[1]
    s.close()
    host_key = " ".join(open(f"{d}/host.pub").read().split()[:2])
    with open(f"{d}/known_hosts", "w") as f:
        f.write(f"[{IP}]:{port} {host_key}\n")
    # The far side: what `{d}/mode` names when the session starts.
    with open(f"{d}/remote.sh", "w") as f:
        f.write(f"""case $(cat {d}/mode) in
echo) stty raw echo; printf '<<%s>>' READY; exec cat > /dev/null ;;
cat) stty -echo -icanon min 1; printf '<<%s>>' READY; head -c 1 > /dev/null
     stty opost onlcr; cat {d}/text; printf '<<%s>>' END; head -c 1 > /dev/null ;;
esac
""")
    os.chmod(f"{d}/remote.sh", 0o644)
    cfg = f"{d}/sshd_config"
    with open(cfg, "w") as f:
        f.write(f"ListenAddress {IP}:{port}\nHostKey {d}/host\nPidFile {d}/sshd.pid\n"
                f"AuthorizedKeysFile {d}/authorized_keys\nPasswordAuthentication no\n"
                "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nLogLevel DEBUG1\n"
                f"ForceCommand /bin/sh {d}/remote.sh\n"
                # bash (a user's shell running the ForceCommand) sources
                # ~/.bashrc when sshd starts it as a top-level shell; SHLVL
                # makes it a nested one, so no start-up file runs (root's
                # here runs `pyenv init`, seconds under load).
                "SetEnv SHLVL=1\n")
    sshd = subprocess.Popen(["/usr/sbin/sshd", "-D", "-f", cfg, "-E", f"{d}/sshd.log"])
    cleanups.append(lambda: (sshd.terminate(), sshd.wait()))
    deadline = time.time() + 10
    while True:
        try:
            socket.create_connection((IP, port), timeout=1).close()
            break
        except OSError:
            if time.time() > deadline:
                sys.exit("sshd did not start")
            time.sleep(0.01)
    with open(f"{d}/ssh_config", "w") as f:
        f.write(f"Host *\n  Port {port}\n  User {user}\n  IdentityFile {d}/id\n  IdentitiesOnly yes\n"
                f"  IdentityAgent none\n  UserKnownHostsFile {d}/known_hosts\n"
                "  StrictHostKeyChecking yes\n  BatchMode yes\n")
    return port


def negotiated():
    """Each connection's (cipher, MAC, kex) from sshd's debug log, in order."""
    text = open(f"{d}/sshd.log", errors="replace").read()
    kex = re.findall(r"kex: algorithm: (\S+)", text)
    cipher = re.findall(r"kex: client->server cipher: (\S+) MAC: (\S+)", text)
    return [(c, m, k) for (c, m), k in zip(cipher, kex)]


# ---------------------------------------------------------------- PTYs
QUERY = re.compile(rb"\x1b\[\?u|\x1b\[\?(\d+)\$p|\x1b\[c|\x1b\[0c|\x1b\[6n")
STRIP = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[P_^X][^\x1b]*\x1b\\|\x1b[()*+].|\x1b[^\[\]P_^X()*+]")


class Client:
    """A program on a PTY the script owns, as a person's terminal."""

    def __init__(self, label, argv, env=None):
        self.label = label
        pid, fd = pty.fork()
        if pid == 0:
            try:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
                e = dict(os.environ, TERM="xterm-256color", **(env or {}))
                e.pop("TMUX", None)
                os.execvpe(argv[0], argv, e)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        # Other processes whose CPU counts for this client (a daemon, a
        # tmux server).
        self.extra_pids = []
        self.tail = b""
        self.seen = b""
        procs.append(self)

    def read(self, timeout):
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return None
        try:
            return os.read(self.fd, 1 << 16)
        except OSError:
            return b""

    def answer(self, chunk):
        """Answers the capture's queries in what the client wrote."""
        data = self.tail + chunk
        end = 0
        for m in QUERY.finditer(data):
            q = m.group(0)
            if q == b"\x1b[?u":
                os.write(self.fd, b"\x1b[?0u")
            elif q in (b"\x1b[c", b"\x1b[0c"):
                os.write(self.fd, b"\x1b[?62c")
            elif q == b"\x1b[6n":
                os.write(self.fd, b"\x1b[1;1R")
            else:
                os.write(self.fd, b"\x1b[?" + m.group(1) + b";2$y")
            end = m.end()
        rest = data[end:]
        esc = rest.rfind(b"\x1b")
        self.tail = rest[esc:] if esc >= 0 and len(rest) - esc < 16 else b""

    def until(self, marker, timeout=30.0, answer=True):
        """Reads (answering queries) until `marker` shows in the text."""
        deadline = time.time() + timeout
        while True:
            if marker in STRIP.sub(b"", self.seen):
                self.seen = b""
                return
            left = deadline - time.time()
            chunk = self.read(max(left, 0)) if left > 0 else None
            if not chunk:
                raise RuntimeError(f"{self.label}: no {marker!r} (got {self.seen[-300:]!r})")
            if answer:
                self.answer(chunk)
            self.seen = (self.seen + chunk)[-1 << 16:]

    def pump(self, seconds):
        """Reads (answering queries) for `seconds`."""
        deadline = time.time() + seconds
        while (left := deadline - time.time()) > 0:
            chunk = self.read(left)
            if chunk:
                self.answer(chunk)
            elif chunk == b"":
                return

    def drain(self):
        while self.read(0):
            pass

    def keystroke(self, ch):
        """Nanoseconds from writing `ch` to reading its echo."""
        buf = b""
        fd = self.fd
        t0 = time.perf_counter_ns()
        os.write(fd, ch)
        while True:
            r, _, _ = select.select([fd], [], [], 5.0)
            if not r:
                raise RuntimeError(f"{self.label}: no echo of {ch!r} (got {buf!r})")
            buf += os.read(fd, 4096)
            if ch in buf and (ch in STRIP.sub(b"", buf)):
                return time.perf_counter_ns() - t0

    def cpu_ns(self):
        """CPU time of the client and its extra processes, every thread
        (/proc/PID/task/TID/schedstat: nanoseconds on a CPU)."""
        total = 0
        for pid in [self.pid] + self.extra_pids:
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in tids:
                try:
                    total += int(open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[0])
                except (OSError, ValueError, IndexError):
                    pass
        return total

    def hwm_kib(self):
        try:
            for line in open(f"/proc/{self.pid}/status"):
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        except OSError:
            pass
        return None

    def end(self):
        try:
            os.kill(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.time() + 5
        while time.time() < deadline:
            try:
                self.read(0.05)
            except OSError:
                pass
            if os.waitpid(self.pid, os.WNOHANG)[0]:
                break
        else:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        try:
            os.close(self.fd)
        except OSError:
            pass
        if self in procs:
            procs.remove(self)


def set_mode(m):
    with open(f"{d}/mode", "w") as f:
        f.write(m + "\n")
    os.chmod(f"{d}/mode", 0o644)


def ssh_clients(port):
    cfg = f"{d}/ssh_config"
    out = {}
    builds = [("tether ssh", tether)] + [(f"tether ssh {tag}", exe) for tag, exe in others]
    env = {"TETHER_DIR": f"{d}/tether-ssh"}
    for label, exe in builds:
        out[label] = [exe, "ssh", "-F", cfg, IP]
    out["ssh -tt"] = ["ssh", "-tt", "-F", cfg, "-c", CIPHER, "-o", f"KexAlgorithms={KEX}", IP]
    return out, env


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def latency(clients):
    """SAMPLES keystrokes per client, back to back and with gaps, the
    clients taking turns in blocks."""
    letters = b"abcdefgijkopvwyz"
    res = {}
    for mode, gap in (("back to back", 0.0), ("20 ms gaps", GAP)):
        got = {c.label: [] for c in clients}
        cpu = {c.label: 0 for c in clients}
        for c in clients:  # warm-up
            for i in range(20):
                c.keystroke(letters[i % len(letters):][:1])
        done = 0
        turn = 0
        while done < samples:
            n = min(BLOCK, samples - done)
            # Each turn starts with the next client, so none always follows
            # the same one.
            for c in clients[turn % len(clients):] + clients[:turn % len(clients)]:
                c.drain()
                before = c.cpu_ns()
                for i in range(n):
                    if gap:
                        time.sleep(gap)
                    got[c.label].append(c.keystroke(letters[i % len(letters):][:1]) / 1e6)
                cpu[c.label] += c.cpu_ns() - before
            done += n
            turn += 1
        res[mode] = (got, cpu)
    return res


def show_latency(title, res, base):
    log(f"\n{title}: keystroke to echo, {samples} samples each, blocks of {BLOCK} interleaved")
    for mode, (got, cpu) in res.items():
        b = statistics.median(got[base])
        bp = pct(got[base], 99)
        log(f"  {mode}:")
        for label, xs in got.items():
            med, p99 = statistics.median(xs), pct(xs, 99)
            log(f"    {label:28} median {med:7.3f} ms   p90 {pct(xs, 90):7.3f}   p99 {p99:7.3f} ms"
                f"   ratio to {base}: median {med / b:5.2f}x  p99 {p99 / bp:5.2f}x"
                f"   CPU {cpu[label] / 1e3 / len(xs):6.1f} us/key")


def main():
    port = start_sshd()
    log(f"tether {tether}{''.join(f', {tag} {exe}' for tag, exe in others)}; sshd on {IP}:{port} as {user}; state in {d}")
    log(f"machine: {os.cpu_count()} cores, load {os.getloadavg()}")

    if "ssh" in only:
        set_mode("echo")
        argvs, env = ssh_clients(port)
        clients = []
        before = len(negotiated())
        for label, argv in argvs.items():
            c = Client(label, argv, env)
            c.until(b"<<READY>>")
            clients.append(c)
        floor = Client("bare local PTY (floor)", ["sh", "-c", "stty raw echo; printf '<<%s>>' READY; exec cat > /dev/null"])
        floor.until(b"<<READY>>")
        clients.append(floor)
        for label, (c, m, k) in zip(argvs, negotiated()[before:]):
            log(f"  {label}: cipher {c}, MAC {m}, kex {k}")
            if (c, k) != (CIPHER, KEX):
                log(f"  WARNING: {label} did not negotiate {CIPHER} with {KEX}: the comparison is not like for like")
        res = latency(clients)
        show_latency("tether ssh / ssh -tt", res, "ssh -tt")
        for c in clients:
            c.end()

    if "attach" in only:
        tdir = f"{d}/tether-attach"
        env = dict(os.environ, TETHER_DIR=tdir, TETHER_IDLE_EXIT="600")
        builds = [("tether attach", tether)] + [(f"tether attach {tag}", exe) for tag, exe in others]
        clients = []
        for i, (label, exe) in enumerate(builds):
            # One daemon per build, each its own session.
            benv = dict(env, TETHER_DIR=f"{tdir}-{i}")
            subprocess.run([exe, "run", "-s", "bench", "--norc", "--", "true"], env=benv, check=True,
                           stdout=subprocess.DEVNULL)
            cleanups.append(lambda exe=exe, benv=benv: subprocess.run([exe, "daemon", "stop"], env=benv,
                                                                      capture_output=True))
            c = Client(label, [exe, "attach", "bench"], {"TETHER_DIR": benv["TETHER_DIR"]})
            status = subprocess.run([exe, "daemon", "status"], env=benv, capture_output=True, text=True).stdout
            m = re.search(r"\(pid (\d+)\)", status)
            if m:
                c.extra_pids.append(int(m.group(1)))
            c.pump(0.5)
            os.write(c.fd, b"stty raw echo; printf '<<%s>>' READY; cat > /dev/null\r")
            c.until(b"<<READY>>")
            clients.append(c)
        sock = f"tether-bench-{os.getpid()}"
        tenv = dict(os.environ, TMUX_TMPDIR=d)
        tenv.pop("TMUX", None)
        with open(f"{d}/tmux.conf", "w") as f:
            f.write("set -g status off\nset -g escape-time 0\n")
        subprocess.run(["tmux", "-L", sock, "-f", f"{d}/tmux.conf", "new-session", "-d", "-s", "bench",
                        "-x", "80", "-y", "24", f"sh -c \"stty raw echo; printf '<<%s>>' READY; exec cat > /dev/null\""],
                       env=tenv, check=True)
        cleanups.append(lambda: subprocess.run(["tmux", "-L", sock, "kill-server"], env=tenv, capture_output=True))
        tm = Client("tmux attach", ["tmux", "-L", sock, "attach", "-t", "bench"], {"TMUX_TMPDIR": d})
        server = subprocess.run(["tmux", "-L", sock, "display-message", "-p", "#{pid}"], env=tenv,
                                capture_output=True, text=True).stdout.strip()
        if server.isdigit():
            tm.extra_pids.append(int(server))
        tm.until(b"<<READY>>")
        clients.append(tm)
        floor = Client("bare local PTY (floor)", ["sh", "-c", "stty raw echo; printf '<<%s>>' READY; exec cat > /dev/null"])
        floor.until(b"<<READY>>")
        clients.append(floor)
        res = latency(clients)
        show_latency("tether attach / tmux attach", res, "tmux attach")
        for c in clients:
            c.end()

    if "throughput" in only:
        # Text: words and punctuation, a newline every ~70 bytes.
        words = b"the quick brown fox jumps over a lazy dog while terminals scroll past lines of text".split()
        block, line, i = bytearray(), bytearray(), 0
        while len(block) < 1 << 20:
            w = words[(i * 7 + i // 13) % len(words)]
            i += 1
            if len(line) + len(w) + 1 > 70:
                block += line + b"\n"
                line = bytearray()
            line += w + b" "
        block = bytes(block[: 1 << 20])
        with open(f"{d}/text", "wb") as f:
            for _ in range(mib):
                f.write(block)
        os.chmod(f"{d}/text", 0o644)
        set_mode("cat")
        argvs, env = ssh_clients(port)
        size = mib << 20
        got = {k: [] for k in argvs}
        hwm = {k: [] for k in argvs}
        for r in range(rounds + 1):  # round 0 warms up
            for label, argv in argvs.items():
                c = Client(label, argv, env)
                c.until(b"<<READY>>")
                c.drain()
                n = 0
                tail = b""
                t0 = time.perf_counter()
                os.write(c.fd, b"g")
                fd = c.fd
                while True:
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:
                        raise RuntimeError(f"{label}: output ended early after {n} bytes")
                    n += len(chunk)
                    if b"<<END>>" in tail + chunk:
                        break
                    tail = chunk[-8:]
                dt = time.perf_counter() - t0
                kib = c.hwm_kib()
                os.write(c.fd, b"g")
                c.end()
                if r:
                    got[label].append((size / dt / 1e6, n))
                    hwm[label].append(kib)
        log(f"\noutput throughput: cat of a {mib} MiB text file (~70-byte lines, OPOST on) in the remote PTY,"
            f" {rounds} rounds interleaved (after one warm-up round)")
        base = statistics.median(x for x, _ in got["ssh -tt"])
        for label in argvs:
            rates = [x for x, _ in got[label]]
            med = statistics.median(rates)
            log(f"  {label:28} {med:7.1f} MB/s (rounds: {', '.join(f'{x:.1f}' for x in rates)})"
                f"   ratio {med / base:5.2f}x   max RSS (VmHWM) {max(h or 0 for h in hwm[label]) / 1024:6.1f} MiB"
                f"   bytes read {got[label][0][1]}")


try:
    main()
finally:
    for c in list(procs):
        try:
            c.end()
        except Exception:
            pass
    for f in reversed(cleanups):
        try:
            f()
        except Exception:
            pass
    if not os.environ.get("BENCH_KEEP"):
        shutil.rmtree(d, ignore_errors=True)
