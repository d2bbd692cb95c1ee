#!/usr/bin/env python3
"""`tether cp` beside pdcp, clush --copy and parallel-scp on 10 hosts, and
beside scp and sftp on one: 1 GiB pushed, and 1,000 files of 4 KiB pushed
recursively. Wall time, client CPU time and the client's peak RSS, rounds
interleaved, one cipher for every tool (aes128-gcm@openssh.com; CIPHER=
changes it).

Starts 10 real sshd on 127.0.0.2 ... (one port, one host key, key-only
auth, UsePAM no, OpenSSH's sftp-server), each in a mount namespace of its
own with a tmpfs at /srv/tether-cp-dest owned by the login user: every host
has a file system of its own, as real hosts do, and nothing waits on this
machine's disk. Copies are checked (sizes on every host) and removed
between runs through /proc/PID/root. The sources live in /dev/shm. Logs in
as a plain user with a clean start-up (default tether-test). Needs root,
sshd, pdsh (pdcp), clustershell and pssh (parallel-scp).

usage: scripts/bench-cp.py [TETHER] [ROUNDS] [USER]
       PEERS="tether cp,pdcp" BENCH=big10,big1,small10 (defaults: all)
       TETHER_B=/path/to/other/tether adds a second build (10 hosts)
"""
import os
import pwd
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

tether = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/tether")
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
user = sys.argv[3] if len(sys.argv) > 3 else "tether-test"
cipher = os.environ.get("CIPHER", "aes128-gcm@openssh.com")
n = 10
DEST = "/srv/tether-cp-dest"
GIB = 1 << 30
d = tempfile.mkdtemp(prefix="tether-bench-cp-")
src = tempfile.mkdtemp(prefix="tether-bench-cp-src-", dir="/dev/shm")
ips = [f"127.0.0.{i}" for i in range(2, 2 + n)]
sftp_server = next(p for p in ["/usr/lib/openssh/sftp-server", "/usr/libexec/openssh/sftp-server"] if os.path.exists(p))


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


pw = pwd.getpwnam(user)
shadow = subprocess.run(["getent", "shadow", user], capture_output=True, text=True).stdout
if shadow.split(":")[1:2] == ["!"]:
    subprocess.run(["usermod", "-p", "*", user], check=True)
subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{d}/host"], check=True)
subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{d}/id"], check=True)
shutil.copy(f"{d}/id.pub", f"{d}/authorized_keys")
os.chmod(d, 0o755)
os.chmod(f"{d}/authorized_keys", 0o644)
os.makedirs("/run/sshd", exist_ok=True)
os.makedirs(DEST, exist_ok=True)
port = free_port()
host_key = " ".join(open(f"{d}/host.pub").read().split()[:2])
with open(f"{d}/known_hosts", "w") as f:
    for ip in ips:
        f.write(f"[{ip}]:{port} {host_key}\n")
sshd = {}
for ip in ips:
    cfg = f"{d}/sshd_{ip}"
    with open(cfg, "w") as f:
        f.write(f"ListenAddress {ip}:{port}\nHostKey {d}/host\nPidFile {d}/pid_{ip}\nAuthorizedKeysFile {d}/authorized_keys\n"
                "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nLogLevel ERROR\nMaxStartups 500\n"
                f"Subsystem sftp {sftp_server}\n")
    mount = f"mount -t tmpfs -o size=2g,mode=0755,uid={pw.pw_uid},gid={pw.pw_gid} tmpfs {DEST}"
    sshd[ip] = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c",
                                 f"{mount} && exec /usr/sbin/sshd -D -f {cfg} -E {d}/log_{ip}"])
for ip in ips:
    deadline = time.time() + 10
    while True:
        try:
            socket.create_connection((ip, port), timeout=1).close()
            break
        except OSError:
            if time.time() > deadline:
                sys.exit(f"sshd on {ip} did not start")
            time.sleep(0.01)

cfg = f"{d}/ssh_config"
with open(cfg, "w") as f:
    f.write(f"Host *\n  Port {port}\n  User {user}\n  IdentityFile {d}/id\n  IdentitiesOnly yes\n  IdentityAgent none\n"
            f"  UserKnownHostsFile {d}/known_hosts\n  StrictHostKeyChecking yes\n  BatchMode yes\n  Ciphers {cipher}\n")


def host_dest(ip):
    """The host's tmpfs, as its sshd sees it."""
    return f"/proc/{sshd[ip].pid}/root{DEST}"


def clear():
    for ip in ips:
        for name in os.listdir(host_dest(ip)):
            p = os.path.join(host_dest(ip), name)
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p)
            else:
                os.unlink(p)


def du(path):
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            total += os.lstat(os.path.join(root, name)).st_size
    return total


# The sources.
big = f"{src}/big.bin"
with open(big, "wb") as f:
    block = os.urandom(1 << 20)
    for _ in range(GIB >> 20):
        f.write(block)
small = f"{src}/small"
os.makedirs(small)
for i in range(1000):
    with open(f"{small}/f{i:04}", "wb") as f:
        f.write(os.urandom(4096))

nodes = f"127.0.0.[2-{1 + n}]"
plain = ",".join(ips)
pdsh_env = {"PDSH_SSH_ARGS_APPEND": f"-F {cfg}"}


def suite(source, hosts, recursive):
    """Each tool's command for `source` to `hosts` (a list of addresses)."""
    r = ["-r"] if recursive else []
    if len(hosts) == 1:
        batch = f"{d}/sftp_batch"
        with open(batch, "w") as f:
            f.write(f"put {'-R ' if recursive else ''}{source} {DEST}/\n")
        return {
            "tether cp": ([tether, "cp", "-F", cfg, *r, source, f"{hosts[0]}:{DEST}/"], None),
            "scp": (["scp", "-F", cfg, "-q", *r, source, f"{hosts[0]}:{DEST}/"], None),
            "sftp": (["sftp", "-F", cfg, "-q", "-b", batch, hosts[0]], None),
        }
    b = os.environ.get("TETHER_B")
    return {
        "tether cp": ([tether, "cp", "-F", cfg, "-f", str(n), *r, source, f"{nodes}:{DEST}/"], None),
        **({"tether B cp": ([b, "cp", "-F", cfg, "-f", str(n), *r, source, f"{nodes}:{DEST}/"], None)} if b else {}),
        "pdcp": (["pdcp", "-R", "ssh", "-f", str(n), "-w", plain, *r, source, f"{DEST}/"], pdsh_env),
        "clush --copy": (["clush", "-f", str(n), "-o", f"-F {cfg}", "-w", nodes, "--copy", source, "--dest", f"{DEST}/"], None),
        "parallel-scp": (["parallel-scp", "-p", str(n), "-x", f"-F {cfg}", "-H", " ".join(hosts), *r, source, f"{DEST}/"], None),
    }


def timed(argv, extra_env):
    """Wall, client CPU and peak RSS (GNU time's %M: a child forked from
    this Python would carry its RSS as a floor across exec)."""
    env = dict(os.environ, **(extra_env or {}))
    rss_file = f"{d}/rss"
    t = time.perf_counter()
    p = subprocess.Popen(["/usr/bin/time", "-o", rss_file, "-f", "%M", *argv],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    err = p.stderr.read().decode()
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{argv[0]} failed: {err[:500]}")
    rss = int(open(rss_file).read().split()[-1]) / 1024
    return wall, ru.ru_utime + ru.ru_stime, rss


def bench(key, title, source, hosts, recursive, expect):
    if os.environ.get("BENCH") and key not in os.environ["BENCH"].split(","):
        return
    peers = suite(source, hosts, recursive)
    if os.environ.get("PEERS"):
        wanted = os.environ["PEERS"].split(",")
        peers = {k: v for k, v in peers.items() if k in wanted}
    samples = {k: [] for k in peers}
    for r in range(rounds + 1):
        for k, (argv, env) in peers.items():
            clear()
            sample = timed(argv, env)
            for ip in hosts:
                got = du(host_dest(ip))
                if got != expect:
                    sys.exit(f"{k}: {ip} has {got} bytes, not {expect}")
            if r > 0:  # the first round warms up
                samples[k].append(sample)
    clear()
    sys.stdout.flush()
    print(f"\n{title}, {rounds} rounds interleaved, cipher {cipher}")
    walls = {k: statistics.median(w for w, _, _ in s) for k, s in samples.items()}
    fastest_peer = min((w for k, w in walls.items() if not k.startswith("tether")), default=float("nan"))
    for k, s in samples.items():
        wall = walls[k]
        cpu = statistics.median(c for _, c, _ in s)
        rss = max(m for _, _, m in s)
        rate = expect * len(hosts) / wall / (1 << 20)
        print(f"{k:14} wall {wall:7.3f} s  {rate:7.0f} MiB/s  client CPU {cpu:7.3f} s  peak RSS {rss:6.1f} MiB"
              + (f"   ({wall / fastest_peer:.2f}x the fastest peer)" if k.startswith("tether") else ""))


try:
    bench("big10", f"1 GiB pushed to {n} hosts", big, ips, False, GIB)
    bench("big1", "1 GiB pushed to one host", big, ips[:1], False, GIB)
    bench("small10", f"1,000 files of 4 KiB pushed recursively to {n} hosts", small, ips, True, 1000 * 4096)
finally:
    for p in sshd.values():
        p.terminate()
    for p in sshd.values():
        p.wait()
    shutil.rmtree(src, ignore_errors=True)
    shutil.rmtree(d, ignore_errors=True)
    try:
        os.rmdir(DEST)
    except OSError:
        pass
