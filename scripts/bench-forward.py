#!/usr/bin/env python3
"""Port forwarding, `tether ssh` beside OpenSSH's `ssh`, in one run, the same
cipher for both (aes128-gcm@openssh.com; CIPHER= changes it):

- throughput through -L: 1 GiB (SIZE_MIB= changes it) sent by a local TCP
  server, through `-N -L 127.0.0.1:LPORT:127.0.0.1:DPORT`, read to its end
  by this script and checked (byte count and SHA-256); timed from connect()
  to the end of the stream;
- connection rate through -D: 1,000 short HTTP requests (REQUESTS=), 8 at a
  time (PARALLEL=), each a new SOCKS5 connection (CONNECT by host name, as
  `curl --socks5-hostname` does) through `-N -D 127.0.0.1:SPORT` to
  python's http.server (its answer in one write), each request complete at
  Content-Length as curl's is, every answer checked.

Client CPU is user + system time of the forwarding client (and any process
under it) over the measured interval only, read from /proc/PID/stat before
and after (authentication and start-up are not in it). Rounds are
interleaved, after one warm-up round; the medians are printed with the
ratios tether/ssh (rate: higher is better; CPU: lower is better).

One real sshd on 127.0.0.2 (ed25519 host key, key-only, UsePAM no), the
login user tether-test (or USER arg). A client that cannot start the
forward (tether before `-N -L/-D` landed) is reported with its error line
and the rest goes on. Needs root (to start sshd), sshd, ssh.

usage: scripts/bench-forward.py [TETHER] [ROUNDS] [USER]
       BENCH=L,D (default both)  PEERS="tether ssh,ssh" (default both)
       TETHER_B=/path/to/other/tether adds a second build
"""
import hashlib
import os
import pwd
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

tether = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/tether")
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
user = sys.argv[3] if len(sys.argv) > 3 else "tether-test"
cipher = os.environ.get("CIPHER", "aes128-gcm@openssh.com")
size = int(os.environ.get("SIZE_MIB", "1024")) << 20
requests = int(os.environ.get("REQUESTS", "1000"))
parallel = int(os.environ.get("PARALLEL", "8"))
SSHD_IP = "127.0.0.2"
TICK = os.sysconf("SC_CLK_TCK")
d = tempfile.mkdtemp(prefix="tether-bench-forward-")
procs = []


def free_port(ip="127.0.0.1"):
    s = socket.socket()
    s.bind((ip, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port, ip="127.0.0.1", proc=None, timeout=20.0):
    """Until something accepts on ip:port (False if proc ended or time ran out)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            socket.create_connection((ip, port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.02)
    return False


def cleanup():
    for p in procs:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
    shutil.rmtree(d, ignore_errors=True)


# --- sshd and the client config -------------------------------------------
pw = pwd.getpwnam(user)
shadow = subprocess.run(["getent", "shadow", user], capture_output=True, text=True).stdout
if shadow.split(":")[1:2] == ["!"]:
    subprocess.run(["usermod", "-p", "*", user], check=True)
for name in ("host", "id"):
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{d}/{name}"], check=True)
shutil.copy(f"{d}/id.pub", f"{d}/authorized_keys")
os.chmod(d, 0o755)
os.chmod(f"{d}/authorized_keys", 0o644)
os.makedirs("/run/sshd", exist_ok=True)
sshd_port = free_port(SSHD_IP)
with open(f"{d}/sshd_config", "w") as f:
    f.write(f"ListenAddress {SSHD_IP}:{sshd_port}\nHostKey {d}/host\nPidFile {d}/sshd.pid\n"
            f"AuthorizedKeysFile {d}/authorized_keys\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nLogLevel ERROR\n"
            "MaxStartups 500\nMaxSessions 100\nAllowTcpForwarding yes\n")
procs.append(subprocess.Popen(["/usr/sbin/sshd", "-D", "-f", f"{d}/sshd_config", "-E", f"{d}/sshd.log"]))
if not wait_port(sshd_port, SSHD_IP, procs[-1]):
    cleanup()
    sys.exit("sshd did not start; see its config above")
host_key = " ".join(open(f"{d}/host.pub").read().split()[:2])
with open(f"{d}/known_hosts", "w") as f:
    f.write(f"[{SSHD_IP}]:{sshd_port} {host_key}\n")
cfg = f"{d}/ssh_config"
with open(cfg, "w") as f:
    f.write(f"Host bench\n  HostName {SSHD_IP}\n  Port {sshd_port}\n  User {user}\n  IdentityFile {d}/id\n"
            f"  IdentitiesOnly yes\n  IdentityAgent none\n  UserKnownHostsFile {d}/known_hosts\n"
            f"  StrictHostKeyChecking yes\n  BatchMode yes\n  Ciphers {cipher}\n")

# --- the far ends: a data server and an HTTP server --------------------------
# The data server sends SIZE bytes (a 1 MiB random block, repeated) to a
# connection that first sends "G"; one that sends nothing (a readiness probe)
# is closed. It runs in a process of its own so this script's reading does
# not share its interpreter lock.
DATA_SERVER = r"""
import os, socket, sys, threading
size = int(sys.argv[1]); block = open(sys.argv[2], 'rb').read()
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', 0)); s.listen(64)
print(s.getsockname()[1], flush=True)
def serve(c):
    with c:
        if c.recv(1) != b'G':
            return
        left = size
        while left:
            n = min(left, len(block)); c.sendall(block[:n]); left -= n
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"""
block = os.urandom(1 << 20)
with open(f"{d}/block", "wb") as f:
    f.write(block)
want = hashlib.sha256()
left = size
while left:
    n = min(left, len(block))
    want.update(block[:n])
    left -= n
want_digest = want.hexdigest()
data_server = subprocess.Popen([sys.executable, "-c", DATA_SERVER, str(size), f"{d}/block"],
                               stdout=subprocess.PIPE, text=True)
procs.append(data_server)
data_port = int(data_server.stdout.readline())

os.makedirs(f"{d}/www")
BODY = b"tether bench-forward\n" * 8
with open(f"{d}/www/page", "wb") as f:
    f.write(BODY)
http_port = free_port()
# python's http.server, its answer in one write (headers and body apart
# would meet Nagle and a delayed ACK: 40 ms a request through any forward).
HTTP_SERVER = r"""
import functools, http.server, sys
class Handler(http.server.SimpleHTTPRequestHandler):
    wbufsize = -1
    disable_nagle_algorithm = True
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer.request_queue_size = 256
http.server.ThreadingHTTPServer(('127.0.0.1', int(sys.argv[1])),
    functools.partial(Handler, directory=sys.argv[2])).serve_forever()
"""
procs.append(subprocess.Popen([sys.executable, "-c", HTTP_SERVER, str(http_port), f"{d}/www"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
if not wait_port(http_port, proc=procs[-1]):
    cleanup()
    sys.exit("python3 -m http.server did not start")


# --- clients ------------------------------------------------------------------
def clients():
    """Each client's argv prefix (before the forward options and the host)."""
    peers = {"tether ssh": [tether, "ssh"], "ssh": ["ssh"]}
    if os.environ.get("TETHER_B"):
        peers["tether B ssh"] = [os.path.abspath(os.environ["TETHER_B"]), "ssh"]
    if os.environ.get("PEERS"):
        wanted = os.environ["PEERS"].split(",")
        peers = {k: v for k, v in peers.items() if k in wanted}
    return peers


def tree_cpu(pid):
    """User + system seconds of pid and every live process under it
    (and of the children they have waited for)."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append((int(entry), fields))
    total = 0
    todo = [pid]
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        total += sum(int(x) for x in fields[11:15])
    except OSError:
        return 0.0
    while todo:
        for child, fields in children.get(todo.pop(), []):
            total += sum(int(x) for x in fields[11:15])
            todo.append(child)
    return total / TICK


class Forward:
    """One client holding one forward (`-N` and the forward option) open."""

    def __init__(self, argv0, option, port):
        self.err = open(f"{d}/client.err", "w+")
        self.argv = [*argv0, "-F", cfg, "-N", *option, "bench"]
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self.err)
        self.ready = wait_port(port, proc=self.proc)

    def error(self):
        """Why the forward did not come up: the client's first error line."""
        self.err.seek(0)
        lines = [l for l in self.err.read().splitlines() if l.strip()]
        status = self.proc.poll()
        print(f"  `{' '.join(self.argv)}` did not forward:", *lines[:5], sep="\n    ", file=sys.stderr)
        why = lines[0] if lines else "no error line; the port never accepted"
        return why + (f" (exit {status})" if status is not None else "")

    def close(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.err.close()


def through_l(argv0):
    """(wall, client CPU) of SIZE bytes through -L, checked."""
    port = free_port()
    fwd = Forward(argv0, ["-L", f"127.0.0.1:{port}:127.0.0.1:{data_port}"], port)
    try:
        if not fwd.ready:
            return fwd.error()
        cpu0 = tree_cpu(fwd.proc.pid)
        t = time.perf_counter()
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"G")
        h = hashlib.sha256()
        buf = bytearray(1 << 20)
        view = memoryview(buf)
        got = 0
        while True:
            n = s.recv_into(buf)
            if n == 0:
                break
            h.update(view[:n])
            got += n
        wall = time.perf_counter() - t
        s.close()
        cpu = tree_cpu(fwd.proc.pid) - cpu0
        if got != size or h.hexdigest() != want_digest:
            return f"{argv0[0]}: {got} bytes through -L, want {size}" + (
                "" if got != size else " (the same count, a different checksum)")
        return wall, cpu
    finally:
        fwd.close()


def socks5_get(port):
    """One HTTP GET through the SOCKS5 proxy on port, by host name."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(b"\x05\x01\x00")
        if s.recv(2) != b"\x05\x00":
            raise OSError("SOCKS5: no-auth refused")
        name = b"127.0.0.1"
        s.sendall(b"\x05\x01\x00\x03" + bytes([len(name)]) + name + http_port.to_bytes(2, "big"))
        head = b""
        while len(head) < 5:
            chunk = s.recv(5 - len(head))
            if not chunk:
                raise OSError("SOCKS5: closed during the reply")
            head += chunk
        if head[1] != 0:
            raise OSError(f"SOCKS5: CONNECT refused ({head[1]})")
        rest = {1: 4 + 2 - 1, 3: head[4] + 2, 4: 16 + 2 - 1}[head[3]]
        while rest:
            chunk = s.recv(rest)
            if not chunk:
                raise OSError("SOCKS5: closed during the reply")
            rest -= len(chunk)
        # Complete at Content-Length, as curl is: the time a forward
        # takes to pass the server's close on is not in the figure.
        s.sendall(b"GET /page HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        answer = b""
        while b"\r\n\r\n" not in answer or len(answer.split(b"\r\n\r\n", 1)[1]) < len(BODY):
            chunk = s.recv(65536)
            if not chunk:
                break
            answer += chunk
    if not answer.startswith(b"HTTP/1.0 200") or not answer.endswith(BODY):
        raise OSError(f"bad answer: {answer[:80]!r}")


def through_d(argv0):
    """(wall, client CPU) of REQUESTS requests through -D, PARALLEL at a time."""
    port = free_port()
    fwd = Forward(argv0, ["-D", f"127.0.0.1:{port}"], port)
    try:
        if not fwd.ready:
            return fwd.error()
        errors = []
        counter = iter(range(requests))
        lock = threading.Lock()

        def worker():
            while True:
                with lock:
                    if next(counter, None) is None or errors:
                        return
                try:
                    socks5_get(port)
                except OSError as e:
                    with lock:
                        errors.append(str(e))
                    return

        cpu0 = tree_cpu(fwd.proc.pid)
        t = time.perf_counter()
        workers = [threading.Thread(target=worker) for _ in range(parallel)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        wall = time.perf_counter() - t
        cpu = tree_cpu(fwd.proc.pid) - cpu0
        if errors:
            return f"{argv0[0]} -D: {errors[0]}"
        return wall, cpu
    finally:
        fwd.close()


BENCHES = {
    "L": ("Throughput through -L", through_l, lambda wall: f"{size / wall / (1 << 20):.0f} MiB/s",
          lambda wall: size / wall),
    "D": ("Connection rate through -D", through_d, lambda wall: f"{requests / wall:.0f} req/s",
          lambda wall: requests / wall),
}


def main():
    wanted = os.environ.get("BENCH", "L,D").split(",")
    peers = clients()
    print(f"# bench-forward: {cipher}; -L {size >> 20} MiB; -D {requests} requests, {parallel} at a time;"
          f" {rounds} rounds after one warm-up; sshd {SSHD_IP}:{sshd_port}, user {user}", flush=True)
    for key in wanted:
        title, run, show, rate = BENCHES[key]
        samples = {k: [] for k in peers}
        failed = {}
        for r in range(rounds + 1):
            for name, argv0 in peers.items():
                if name in failed:
                    continue
                result = run(argv0)
                if isinstance(result, str):
                    failed[name] = result
                    print(f"  {name}: could not run: {result}", file=sys.stderr, flush=True)
                    continue
                if r > 0:
                    samples[name].append(result)
        print(f"\n## {title}\n")
        print("| client | wall (median) | rate | client CPU | rate vs ssh | CPU vs ssh |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        base = samples.get("ssh")
        base_wall = statistics.median(w for w, _ in base) if base else None
        base_cpu = statistics.median(c for _, c in base) if base else None
        for name in peers:
            if name in failed:
                print(f"| `{name}` | could not run: {failed[name][:100]} | | | | |")
                continue
            wall = statistics.median(w for w, _ in samples[name])
            cpu = statistics.median(c for _, c in samples[name])
            vs_rate = f"{rate(wall) / rate(base_wall):.2f}×" if base_wall else ""
            vs_cpu = f"{cpu / base_cpu:.2f}×" if base_cpu else ""
            print(f"| `{name}` | {wall:.2f} s | {show(wall)} | {cpu:.2f} s | {vs_rate} | {vs_cpu} |", flush=True)


try:
    main()
finally:
    cleanup()
