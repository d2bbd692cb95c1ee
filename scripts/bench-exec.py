#!/usr/bin/env python3
"""`true` on N hosts at fanout N: tether exec beside pdsh, parallel-ssh and
clush (with OpenSSH's default key exchange, and with the one tether
negotiates), wall time and client CPU time, interleaved in one run.

Starts N real sshd on 127.0.0.2 ... (one port, one host key, key-only auth,
UsePAM no) and logs in as a plain user with a clean start-up (default
tether-test, /bin/sh, no rc files), so no login script hides the client
differences. Needs root (sshd on many addresses, another user), sshd, pdsh,
pssh and clustershell.

usage: scripts/bench-exec.py [TETHER] [HOSTS] [ROUNDS] [USER]
       scripts/bench-exec.py --connections [TETHER] [ROUNDS] [USER]
         (500 concurrent connections: 10 sshd x 50 sessions; tether's RSS)
       scripts/bench-exec.py --throughput [TETHER] [ROUNDS] [USER]
         (1 GiB from one host, beside `ssh … > /dev/null` with the cipher
         tether negotiates; TETHER_B=/path/to/other/tether adds a second
         tether build, interleaved, to compare two versions)
       scripts/bench-exec.py --tui [TETHER] [ROUNDS] [USER]
         (500 hosts, 10 sshd x 50 names, each printing 5 lines over 1 s,
         on a terminal (a PTY drained by this script): client CPU with the
         live view, `--tui`, beside `--no-tui`)
       scripts/bench-exec.py --remote-shell [TETHER] [ROUNDS] [USER]
         (one command in a persistent remote shell, `tether run --host`,
         beside `ssh host true` and `ssh` over a ControlMaster connection)
"""
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

throughput = sys.argv[1:2] == ["--throughput"]
connections = sys.argv[1:2] == ["--connections"]
remote_shell = sys.argv[1:2] == ["--remote-shell"]
tui = sys.argv[1:2] == ["--tui"]
connections = connections or tui
args = sys.argv[2:] if throughput or connections or remote_shell else sys.argv[1:]
tether = os.path.abspath(args[0] if args else "target/release/tether")
if connections:
    n = 10
    rounds = int(args[1]) if len(args) > 1 else 3
    user = args[2] if len(args) > 2 else "tether-test"
elif throughput or remote_shell:
    n = 1
    rounds = int(args[1]) if len(args) > 1 else 3
    user = args[2] if len(args) > 2 else "tether-test"
else:
    n = int(args[1]) if len(args) > 1 else 50
    rounds = int(args[2]) if len(args) > 2 else 5
    user = args[3] if len(args) > 3 else "tether-test"
d = tempfile.mkdtemp(prefix="tether-bench-exec-")
ips = [f"127.0.0.{i}" for i in range(2, 2 + n)]

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
sshd = []
# The host's own tether (remote-shell mode) lives here, and copies itself
# into a cache of this run's (a first contact is measured).
hostd, cache = f"{d}/hostd", f"{d}/cache"
for p in (hostd, cache):
    os.makedirs(p, mode=0o700)
    shutil.chown(p, user)
for ip in ips:
    cfg = f"{d}/sshd_{ip}"
    with open(cfg, "w") as f:
        f.write(f"ListenAddress {ip}:{port}\nHostKey {d}/host\nPidFile {d}/pid_{ip}\nAuthorizedKeysFile {d}/authorized_keys\n"
                "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nLogLevel ERROR\nMaxStartups 500\n"
                f"SetEnv TETHER_DIR={hostd} XDG_CACHE_HOME={cache}\n")
    sshd.append(subprocess.Popen(["/usr/sbin/sshd", "-D", "-f", cfg, "-E", f"{d}/log_{ip}"]))
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

def ssh_config(kex):
    path = f"{d}/ssh_config_{kex or 'default'}"
    with open(path, "w") as f:
        f.write(f"Host *\n  Port {port}\n  User {user}\n  IdentityFile {d}/id\n  IdentitiesOnly yes\n  IdentityAgent none\n"
                f"  UserKnownHostsFile {d}/known_hosts\n  StrictHostKeyChecking yes\n  BatchMode yes\n")
        if kex:
            f.write(f"  KexAlgorithms {kex}\n")
    return path

KEX = "curve25519-sha256"
nodes = f"127.0.0.[2-{1 + n}]"
plain = ",".join(ips)
peers = {"tether exec": [tether, "exec", "-F", ssh_config(None), "-f", str(n), "-H", nodes, "--", "true"]}
if throughput:
    # tether's first cipher is chacha20-poly1305, which this sshd accepts.
    big = "head -c 1073741824 /dev/zero"
    peers = {
        "tether exec (1 GiB)": ["sh", "-c", f"{tether} exec -F {ssh_config(None)} -H {ips[0]} -- {big} > /dev/null"],
        "tether exec -o Ciphers=aes128-gcm (1 GiB)": ["sh", "-c", f"{tether} exec -F {ssh_config(None)} -o Ciphers=aes128-gcm@openssh.com -H {ips[0]} -- {big} > /dev/null"],
        **({
            "tether B exec (1 GiB)": ["sh", "-c", f"{os.environ['TETHER_B']} exec -F {ssh_config(None)} -H {ips[0]} -- {big} > /dev/null"],
            "tether B exec -o Ciphers=aes128-gcm (1 GiB)": ["sh", "-c", f"{os.environ['TETHER_B']} exec -F {ssh_config(None)} -o Ciphers=aes128-gcm@openssh.com -H {ips[0]} -- {big} > /dev/null"],
        } if os.environ.get("TETHER_B") else {}),
        "ssh -c chacha20-poly1305 (1 GiB)": ["sh", "-c", f"ssh -F {ssh_config(None)} -c chacha20-poly1305@openssh.com {ips[0]} {big} > /dev/null"],
        "ssh -c aes128-gcm (1 GiB)": ["sh", "-c", f"ssh -F {ssh_config(None)} -c aes128-gcm@openssh.com {ips[0]} {big} > /dev/null"],
    }
if connections:
    aliases = f"{d}/ssh_config_aliases"
    with open(aliases, "w") as f:
        for i in range(500):
            f.write(f"Host h{i:03}\n  HostName {ips[i % n]}\n")
        f.write(open(ssh_config(None)).read())
    peers = {"tether exec, 500 connections": [tether, "exec", "-F", aliases, "-f", "500", "-H", "h[000-499]", "--", "sleep 3"]}
    if tui:
        lines = "i=0; while [ $i -lt 5 ]; do echo line $i; i=$((i+1)); sleep 0.2; done"
        run = [tether, "exec", "-F", aliases, "-f", "500", "-H", "h[000-499]"]
        # The run alone (no terminal: no progress line, the output kept and
        # printed at the end to /dev/null), the run as a person sees it
        # without the view (the progress line redrawn under every line), and
        # with the view (then the output printed after).
        peers = {"tether exec --output gather > /dev/null": [*run, "--output", "gather", "--", lines],
                 "tether exec --no-tui (a PTY)": [*run, "--no-tui", "--", lines],
                 "tether exec --tui (a PTY)": [*run, "--tui", "--", lines]}
env = None
if remote_shell:
    # The daemon reads ~/.ssh/config: a home of its own for this run.
    home = f"{d}/home"
    os.makedirs(f"{home}/.ssh")
    shutil.copy(ssh_config(None), f"{home}/.ssh/config")
    env = dict(os.environ, HOME=home, TETHER_DIR=f"{d}/tether", TETHER_IDLE_EXIT="600")
    cm = ["-o", f"ControlPath={d}/cm"]
    subprocess.run(["ssh", "-F", ssh_config(None), *cm, "-o", "ControlMaster=yes", "-fN", ips[0]], check=True)
    # First contact: tether copied to the host's (empty) cache, checked,
    # its daemon started, the session made there.
    t = time.perf_counter()
    subprocess.run([tether, "run", "-s", "first", "--host", ips[0], "--", "true"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    first_contact = time.perf_counter() - t
    # The host's daemon's RSS (the serving process).
    def host_daemon_rss():
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                environ = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
                comm = open(f"/proc/{pid}/comm").read().strip()
                if comm == "tether" and f"TETHER_DIR={hostd}".encode() in environ:
                    status = open(f"/proc/{pid}/status").read()
                    cmd = open(f"/proc/{pid}/cmdline", "rb").read()
                    if b"serve" in cmd:
                        return int(next(l for l in status.splitlines() if l.startswith("VmRSS")).split()[1]) / 1024
            except OSError:
                continue
    # Idle: the first session closed, nothing else there yet.
    subprocess.run([tether, "close", "-s", "first"], env=env, check=True, stdout=subprocess.DEVNULL)
    idle_none = host_daemon_rss()
    peers = {
        "tether run --host (host's tether)": [tether, "run", "-s", "bench", "--host", ips[0], "--", "true"],
        "tether run --host --agentless": [tether, "run", "-s", "bench-agentless", "--host", ips[0], "--agentless", "--", "true"],
        "tether run --host, quoted (syntax check)": [tether, "run", "-s", "bench", "--host", ips[0], "--", "echo \"a\" | true"],
        "ssh host true (new connection)": ["ssh", "-F", ssh_config(None), ips[0], "true"],
        "ssh host true (ControlMaster)": ["ssh", "-F", ssh_config(None), *cm, ips[0], "true"],
    }
for label, kex in ([] if throughput or connections or remote_shell else [("default kex", None), (KEX, KEX)]):
    cfg = ssh_config(kex)
    peers[f"pdsh -R ssh ({label})"] = ["env", f"PDSH_SSH_ARGS_APPEND=-F {cfg}", "pdsh", "-R", "ssh", "-f", str(n), "-w", plain, "true"]
    peers[f"parallel-ssh ({label})"] = ["parallel-ssh", "-p", str(n), "-x", f"-F {cfg}", "-H", " ".join(ips), "true"]
    peers[f"clush ({label})"] = ["clush", "-f", str(n), "-o", f"-F {cfg}", "-w", nodes, "true"]

def in_pty(argv):
    """argv on a new 50x160 PTY whose output is read and dropped; its exit
    code."""
    import fcntl, struct, termios, threading
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 160, 0, 0))
    p = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
    os.close(slave)
    def drain():
        while True:
            try:
                if not os.read(master, 65536):
                    return
            except OSError:
                return
    t = threading.Thread(target=drain)
    t.start()
    code = p.wait()
    t.join()
    os.close(master)
    return code

def timed(argv):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    if tui and "--output" not in argv:
        t = time.perf_counter()
        code = in_pty(argv)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if code != 0:
            sys.exit(f"{argv} failed ({code})")
        return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    t = time.perf_counter()
    r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"{argv[0]} failed ({r.returncode}): {r.stderr.decode()[:500]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if connections and not tui:
        # The largest RSS of any child so far (the tether process), in MiB.
        return wall, after.ru_maxrss / 1024
    return wall, cpu

try:
    for argv in peers.values():
        timed(argv)
    samples = {k: [] for k in peers}
    for _ in range(rounds):
        for k, argv in peers.items():
            samples[k].append(timed(argv))
    what = "1 GiB from one host" if throughput else f"`true` on {n} hosts, fanout {n}"
    if remote_shell:
        what = "`true` on one host, one command per process"
    if connections:
        what = "`sleep 3` on 500 connections (10 sshd x 50), fanout 500"
    if tui:
        what = "5 lines over 1 s on 500 hosts (10 sshd x 50), fanout 500, on a PTY"
    print(f"{what}, {rounds} rounds interleaved; tether negotiates {KEX}")
    base = {k: statistics.median(w for w, _ in s) for k, s in samples.items()}
    for k, s in samples.items():
        wall = statistics.median(w for w, _ in s)
        cpu = statistics.median(c for _, c in s)
        rate = f"   {1024 / wall:6.0f} MiB/s" if throughput else ""
        if remote_shell:
            print(f"{k:40} wall {wall * 1000:7.2f} ms   client CPU {cpu * 1000:7.2f} ms   ({wall / base[next(iter(base))]:.2f}x tether)")
            continue
        if tui:
            cpus = " ".join(f"{c:.3f}" for _, c in s)
            print(f"{k:40} wall {wall:6.3f} s   client CPU {cpu:6.3f} s (rounds: {cpus})")
            continue
        if connections:
            print(f"{k:40} wall {wall:6.3f} s   max RSS {max(c for _, c in s):6.1f} MiB")
            continue
        print(f"{k:40} wall {wall:6.3f} s   client CPU {cpu:6.3f} s{rate}")
    if tui:
        cpu = {k: statistics.median(c for _, c in s) for k, s in samples.items()}
        bare, off, on = cpu.values()
        print(f"client CPU with the live view: {on / bare:.3f}x the run's alone (target under 1.05x), "
              f"{on / off:.3f}x the run's with the progress line and streamed output")
    if remote_shell:
        # Through MCP with a raw JSON-RPC client: one `tether mcp` process,
        # `shell_run` of `true` on the host's session, per call.
        mcp = subprocess.Popen([tether, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        ids = iter(range(1, 1 << 30))
        def rpc(method, params):
            i = next(ids)
            mcp.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
            mcp.stdin.flush()
            while True:
                msg = json.loads(mcp.stdout.readline())
                if msg.get("id") == i:
                    return msg
        rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "bench-exec", "version": "1"}})
        mcp.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        mcp.stdin.flush()
        def mcp_call(session, agentless=False):
            t = time.perf_counter()
            r = rpc("tools/call", {"name": "shell_run", "arguments": {"command": "true", "host": ips[0], "session": session}})
            wall = time.perf_counter() - t
            assert r["result"]["structuredContent"]["exit_code"] == 0, r
            return wall
        mcp_call("mcp")
        walls = [mcp_call("mcp") for _ in range(max(rounds, 20))]
        mcp.stdin.close()
        mcp.wait(timeout=30)
        mcp_ms = statistics.median(walls) * 1000
        cm_ms = base["ssh host true (ControlMaster)"] * 1000
        print(f"{'tether mcp shell_run (raw JSON-RPC)':40} wall {mcp_ms:7.2f} ms   ({mcp_ms / cm_ms:.3f}x ControlMaster)")
        print(f"first contact (copy, verify, start the host's daemon, first command): {first_contact:.2f} s")
        idle = host_daemon_rss()
        for i in range(100):
            subprocess.run([tether, "run", "-s", f"many{i}", "--host", ips[0], "--", "true"], env=env, check=True,
                           stdout=subprocess.DEVNULL)
        print(f"host daemon RSS: {idle_none:.1f} MiB idle (no session), {idle:.1f} MiB with 4 sessions, "
              f"{host_daemon_rss():.1f} MiB with 104")
finally:
    if remote_shell and os.environ.get("BENCH_LOG"):
        for log in (f"{d}/tether/daemon.log", f"{hostd}/daemon.log"):
            print(f"--- {log}")
            print(open(log).read()[-3000:] if os.path.exists(log) else "(none)")
    if remote_shell:
        subprocess.run([tether, "daemon", "stop"], env=env, capture_output=True)
        # The host's daemon (the login user's) and its sessions end with the run.
        for pid in os.listdir("/proc"):
            try:
                if pid.isdigit() and f"TETHER_DIR={hostd}".encode() in open(f"/proc/{pid}/environ", "rb").read().split(b"\0"):
                    os.kill(int(pid), 15)
            except OSError:
                pass
        subprocess.run(["ssh", "-F", ssh_config(None), *cm, "-O", "exit", ips[0]], capture_output=True)
    for p in sshd:
        p.terminate()
    for p in sshd:
        p.wait()
    shutil.rmtree(d, ignore_errors=True)
