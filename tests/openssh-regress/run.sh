#!/usr/bin/env bash
# OpenSSH's client regress tests (openssh-portable regress/, tag V_9_2_P1;
# see README.md) run against this machine's sshd, with `tether ssh` standing
# in for `ssh` (or, with --real-ssh, the real `ssh`, to show the harness
# itself passes). Nothing is fetched: the scripts are vendored in upstream/,
# and adapt.patch holds every change made to them.
#
# usage: run.sh [--real-ssh] [--tether BIN] [--jobs N] [--timeout SECS]
#               [--work DIR] [--key-cache DIR] [--port-base N] [--keep]
#               [--list] [TEST...]
#
# One line per test, as the test ends:
#   PASS name (12s)
#   FAIL name: <first failing line> [during: <the step it was in>]
#   SKIP name: <reason>
# then a summary. Exit 0 when no test failed (skips allowed), 1 otherwise,
# 2 on bad usage. Logs stay in the work directory with --keep (or on failure
# when --work was given).
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"

# Every test this runner knows, longest first (they start in this order).
# The port of each is fixed by its place in this list (see port_of).
ALL_TESTS=(
  try-ciphers kextype exit-status agent percent stderr-data forwarding
  dynamic-forward envpass banner yes-head stderr-after-eof knownhosts-command
  cfginclude sshcfgparse proxyjump transfer portnum knownhosts connect-uri
  proxy-connect connect broken-pipe localcommand host-expand
)

client=tether
tether_bin="${TETHER_BIN:-$ROOT/target/debug/tether}"
jobs=4
timeout_secs=150
work=""
key_cache=""
port_base="${REGRESS_PORT_BASE:-24240}"
keep=no
selected=()

die_usage() { echo "run.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case "$1" in
    --real-ssh) client=ssh ;;
    --tether) tether_bin="${2:?}"; shift ;;
    --jobs) jobs="${2:?}"; shift ;;
    --timeout) timeout_secs="${2:?}"; shift ;;
    --work) work="${2:?}"; shift ;;
    --key-cache) key_cache="${2:?}"; shift ;;
    --port-base) port_base="${2:?}"; shift ;;
    --keep) keep=yes ;;
    --list) printf '%s\n' "${ALL_TESTS[@]}"; exit 0 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die_usage "unknown option $1 (see --help)" ;;
    *) selected+=("$1") ;;
  esac
  shift
done
[ ${#selected[@]} -eq 0 ] && selected=("${ALL_TESTS[@]}")

index_of() {
  local i
  for i in "${!ALL_TESTS[@]}"; do
    [ "${ALL_TESTS[$i]}" = "$1" ] && { echo "$i"; return 0; }
  done
  return 1
}
for t in "${selected[@]}"; do
  index_of "$t" >/dev/null || die_usage "no test named $t (--list lists them)"
done

# What the machine must have; a missing piece skips every test, with why.
SSHD=/usr/sbin/sshd
SFTPSERVER=""
for p in /usr/lib/openssh/sftp-server /usr/libexec/openssh/sftp-server \
         /usr/libexec/sftp-server; do
  [ -x "$p" ] && { SFTPSERVER="$p"; break; }
done
missing=""
[ -x "$SSHD" ] || missing="$missing $SSHD (package openssh-server)"
for tool in ssh-keygen nc patch timeout flock; do
  command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
if [ "$client" = ssh ]; then
  command -v ssh >/dev/null 2>&1 || missing="$missing ssh (package openssh-client)"
  CLIENT="$(command -v ssh)"
elif [ ! -x "$tether_bin" ]; then
  missing="$missing $tether_bin (build it: cargo build -p tether)"
fi
if [ -n "$missing" ]; then
  for t in "${selected[@]}"; do echo "SKIP $t: missing:$missing"; done
  exit 0
fi

# sshd run as root wants its privilege separation directory (the service
# makes it at boot; a fresh container may not have it).
if [ "$(id -u)" -eq 0 ] && [ ! -d /run/sshd ]; then
  mkdir -p /run/sshd && chmod 0755 /run/sshd
fi

if [ -z "$work" ]; then
  work="$(mktemp -d "${TMPDIR:-/tmp}/openssh-regress.XXXXXX")"
  own_work=yes
else
  mkdir -p "$work"
  work="$(cd "$work" && pwd)"
  own_work=no
fi
[ -n "$key_cache" ] || key_cache="$work/keys"
mkdir -p "$key_cache"
key_cache="$(cd "$key_cache" && pwd)"

# The scripts, with the changes in adapt.patch.
src="$work/src"
rm -rf "$src"
mkdir -p "$src"
cp "$HERE"/upstream/*.sh "$src"/
if ! patch -s -p1 -d "$src" <"$HERE/adapt.patch"; then
  echo "run.sh: adapt.patch does not apply to upstream/" >&2
  exit 1
fi

# The client under test: ssh itself, or a wrapper running `tether ssh`.
mkdir -p "$work/bin"
if [ "$client" = tether ]; then
  tether_bin="$(cd "$(dirname "$tether_bin")" && pwd)/$(basename "$tether_bin")"
  CLIENT="$work/bin/tether-ssh"
  printf '#!/bin/sh\nexec "%s" ssh "$@"\n' "$tether_bin" >"$CLIENT"
  chmod +x "$CLIENT"
fi
# Whether the client takes ssh's -E (its log to a file): test-exec.sh passes
# it, and gives a client without it no LogLevel DEBUG3 (whose lines would
# land on the stderr the tests compare).
if "$CLIENT" -E "$work/E-probe.log" -G -F none probe >/dev/null 2>&1; then
  client_has_E=yes
else
  client_has_E=no
  echo "openssh-regress: $CLIENT has no -E (or no -G): no -E and no LogLevel DEBUG3 for it (see adapt.patch)" >&2
fi
# The regress suite's own netcat and mkdtemp (C programs upstream).
NC="$(command -v nc)"
MKDTEMP="$work/bin/mkdtemp"
printf '#!/bin/sh\nexec mktemp -d "${TMPDIR:-/tmp}/$1"\n' >"$MKDTEMP"
chmod +x "$MKDTEMP"

# Keys for every type test-exec.sh may ask for, made once (ssh-keygen of an
# RSA key is the slow part of each test's set-up); test-exec.sh uses a key
# already in $OBJ when it is newer than ssh-keygen.
KEYTYPES="ssh-ed25519 ecdsa-sha2-nistp256 ecdsa-sha2-nistp384 ecdsa-sha2-nistp521 ssh-rsa ssh-dss"
(
  flock 9
  for t in $KEYTYPES; do
    [ -f "$key_cache/$t" ] && [ "$key_cache/$t" -nt "$(command -v ssh-keygen)" ] && continue
    rm -f "$key_cache/$t" "$key_cache/$t.pub"
    ssh-keygen -q -N '' -t "$t" -f "$key_cache/$t" >/dev/null 2>&1 ||
      echo "run.sh: ssh-keygen -t $t failed; test-exec.sh will try again" >&2
  done
) 9>"$key_cache/.lock"

# What a test needs beyond the tools above ("" when nothing).
needs_of() {
  case "$1" in
    agent) echo "ssh-agent ssh-add" ;;
    percent) echo "openssl hostname" ;;
    *) echo "" ;;
  esac
}

port_of() { echo $((port_base + 10 * $(index_of "$1"))); }

# End every process a test left (sshd, ssh -f, ssh-agent): each carries
# REGRESS_RUN=<its OBJ> in its environment, set below.
end_leftovers() {
  local obj="$1" pids
  if [ -f "$obj/pidfile" ]; then
    kill "$(cat "$obj/pidfile")" 2>/dev/null
  fi
  pids="$(grep -lzxF "REGRESS_RUN=$obj" /proc/[0-9]*/environ 2>/dev/null |
    sed -n 's|^/proc/\([0-9]*\)/environ$|\1|p')"
  [ -n "$pids" ] && kill $pids 2>/dev/null
  return 0
}

# The first failing line of a test, with the step it was in.
first_failure() {
  local obj="$1" log="$1/failed-regress.log" line step
  if [ -f "$log" ]; then
    line="$(grep -m1 -E '^(FAIL|FATAL): ' "$log")"
    if [ -n "$line" ]; then
      # The step is the test's last trace/verbose line before the failure
      # (none when it is test-exec.sh's own set-up, about keys).
      step="$(awk -v l="$line" '$0 == l { print prev; exit }
        /^trace: / { prev = substr($0, 8) }
        /^trace: (using cached|generating) key type / { prev = "" }' "$log")"
      echo "${line#*: }${step:+ [during: $step]}"
      return
    fi
  fi
  grep -v '^$' "$obj/output" | tail -n1
}

run_one() {
  local t="$1" obj="$work/obj/$1" port rc start end line tool lacking=""
  for tool in $(needs_of "$t"); do
    command -v "$tool" >/dev/null 2>&1 || lacking="$lacking $tool"
  done
  if [ -n "$lacking" ]; then
    echo "SKIP $t: missing:$lacking"
    return
  fi
  port="$(port_of "$t")"
  # Its port and the next (dynamic-forward's) must be free; else 1000 up.
  local tries=0
  while [ $tries -lt 5 ] && { nc -z 127.0.0.1 "$port" || nc -z 127.0.0.1 $((port + 1)); } 2>/dev/null; do
    port=$((port + 1000))
    tries=$((tries + 1))
  done
  rm -rf "$obj"
  mkdir -p "$obj"
  for k in $KEYTYPES; do
    [ -f "$key_cache/$k" ] && cp -p "$key_cache/$k" "$key_cache/$k.pub" "$obj/"
  done
  ln -s "$NC" "$obj/netcat"
  ln -s "$MKDTEMP" "$obj/mkdtemp"
  local logflag=()
  [ "$client_has_E" = no ] && logflag=(REGRESS_SSH_LOGFLAG=)
  start=$(date +%s)
  (
    cd "$obj" &&
      exec env REGRESS_RUN="$obj" "${logflag[@]}" \
        TEST_SHELL=sh TEST_SSH_PORT="$port" TEST_SSH_UNSAFE_PERMISSIONS=1 \
        TEST_SSH_SSH="$CLIENT" TEST_SSH_SSHD="$SSHD" \
        TEST_SSH_SFTPSERVER="$SFTPSERVER" \
        timeout -k 5 "$timeout_secs" sh "$src/test-exec.sh" "$obj" "$src/$t.sh"
  ) </dev/null >"$obj/output" 2>&1
  rc=$?
  end=$(date +%s)
  end_leftovers "$obj"
  if [ -f "$work/interrupted" ]; then
    echo "FAIL $t: interrupted (the runner was stopped)"
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    line="timed out after ${timeout_secs}s"
    [ -f "$obj/failed-regress.log" ] && line="$line; first failure: $(first_failure "$obj")"
    echo "FAIL $t: $line"
  elif grep -q '^SKIPPED: ' "$obj/output"; then
    echo "SKIP $t: $(grep -m1 '^SKIPPED: ' "$obj/output" | cut -c10-)"
  elif [ $rc -eq 0 ] && ! grep -qE '^(FAIL|FATAL): ' "$obj/failed-regress.log" 2>/dev/null; then
    echo "PASS $t ($((end - start))s)"
  else
    echo "FAIL $t: $(first_failure "$obj")"
  fi
}

echo "openssh-regress: client $CLIENT ($client); work $work" >&2
# Interrupted: end what the tests started, then stop.
trap ': >"$work/interrupted"; for o in "$work"/obj/*; do end_leftovers "$o"; done; exit 130' INT TERM
rm -f "$work/interrupted"
results="$work/results"
: >"$results"
running=0
for t in "${selected[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
  run_one "$t" | tee -a "$results" &
  running=$((running + 1))
done
wait

pass=$(grep -c '^PASS ' "$results")
fail=$(grep -c '^FAIL ' "$results")
skip=$(grep -c '^SKIP ' "$results")
echo "openssh-regress: $pass passed, $fail failed, $skip skipped (client: $client)" >&2
if [ "$fail" -eq 0 ] && [ "$keep" = no ] && [ "$own_work" = yes ]; then
  rm -rf "$work"
elif [ "$fail" -ne 0 ] || [ "$keep" = yes ]; then
  echo "openssh-regress: logs in $work/obj/<test>/ (output, failed-regress.log, ssh.log, sshd.log)" >&2
fi
[ "$fail" -eq 0 ]
