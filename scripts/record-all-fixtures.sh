#!/usr/bin/env bash
# Re-record every terminal fixture under tests/fixtures/ with
# scripts/record-fixture.py.
#
#   scripts/record-all-fixtures.sh              # all fixtures
#   scripts/record-all-fixtures.sh vim tmux     # only these
#
# Needs root (or the programs already installed) on Debian: missing programs
# are installed with apt-get.  Input files live in a fixed work directory
# (/tmp/tether-fixtures-work) so that paths shown by programs do not change
# between runs.  Each recording replaces its fixture only if it succeeded; a
# failed one is left in tests/fixtures/<name>.failed and this script exits 1.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
FIX="$ROOT/tests/fixtures"
REC=(python3 "$ROOT/scripts/record-fixture.py")
WORK=/tmp/tether-fixtures-work
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_SYSTEM=/dev/null

want() {
    [ "${#SELECTED[@]}" -eq 0 ] && return 0
    local n
    for n in "${SELECTED[@]}"; do [ "$n" = "$1" ] && return 0; done
    return 1
}
SELECTED=("$@")

# --------------------------------------------------------------------------
# programs
need=()
for pc in vim:vim less:less htop:htop top:procps tmux:tmux git:git curl:curl \
          python3:python3 bash:bash stty:coreutils; do
    command -v "${pc%%:*}" >/dev/null 2>&1 || need+=("${pc#*:}")
done
if [ "${#need[@]}" -gt 0 ]; then
    echo "installing: ${need[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

rm -rf "$WORK"
mkdir -p "$WORK" "$FIX"

FAILED=()
record() {  # record NAME ARGS... (steps JSON on stdin)
    local name=$1; shift
    if "${REC[@]}" --out "$FIX/$name" --steps - "$@"; then
        annotate "$FIX/$name"
    else
        FAILED+=("$name")
    fi
}

# Adds a naive regex summary of the escape sequences to meta.json (counts of
# DEC private mode sets/resets, OSC numbers, DCS headers, and the last
# set/reset of the modes the screen-mode tracker cares about).
annotate() {
    python3 - "$1" <<'PY'
import collections, json, re, sys
d = sys.argv[1]
out = open(d + "/output.bin", "rb").read()
modes = collections.Counter()
last = {}
for m in re.finditer(rb"\x1b\[\?([0-9;]*)([hl])", out):
    for p in m.group(1).split(b";"):
        if p:
            modes["CSI ?%s%s" % (p.decode(), m.group(2).decode())] += 1
            last[p.decode()] = "set" if m.group(2) == b"h" else "reset"
osc = collections.Counter(m.group(1).decode()
                          for m in re.finditer(rb"\x1b\](\d+)[;\x07\x1b]", out))
dcs = collections.Counter(m.group(1).decode("latin-1")
                          for m in re.finditer(rb"\x1bP([0-9;]*[ -/]*[@-~])", out))
other = collections.Counter()
for m in re.finditer(rb"\x1b\[([<=>?]?)([0-9;:]*)([ -/]*)([@-~])", out):
    pre, par, it, fin = (x.decode() for x in m.groups())
    if (pre == "?" and fin in "hl") or (pre == "" and it == "" and fin in "mHJKCDABGdfXPL@rSTEF`aeM"):
        continue
    other["CSI " + pre + par + it + fin] += 1
meta = json.load(open(d + "/meta.json"))
meta["scan"] = {
    "note": "naive regex scan of output.bin (not a parser); replies echoed by the "
            "program are counted too",
    "dec_private_modes": dict(sorted(modes.items())),
    "osc": dict(sorted(osc.items())),
    "dcs": dict(sorted(dcs.items())),
    "other_csi": dict(sorted(other.items())),
    "sgr_count": len(re.findall(rb"\x1b\[[0-9;:]*m", out)),
    "last_private_mode_change": {k: last.get(k, "never") for k in
        ["1049", "47", "1047", "2004", "1000", "1002", "1003", "1006", "1015", "1004"]},
}
with open(d + "/meta.json", "w") as f:
    json.dump(meta, f, indent=2, ensure_ascii=False)
    f.write("\n")
PY
}

# --------------------------------------------------------------------------
# 1. vim
if want vim; then
mkdir -p "$WORK/vim"
cat > "$WORK/vim/notes.txt" <<'EOF'
Line one of the notes file.
Second line with some words.
Third line: tether test.
Fourth line.
Fifth and last line.
EOF
record vim --cwd "$WORK/vim" --program vim --version-cmd 'vim --version | head -1' \
  --description "vim --clean (defaults.vim loaded: mouse=a, ttimeout...) opens a 5-line notes.txt. At startup vim switches to the alternate screen (1049), enables bracketed paste (2004), modifyOtherKeys (CSI >4;2m), focus events, keypad mode and, after the DA2 reply identifies an xterm, SGR mouse (1000/1002/1006); it queries DA2, CPR (ambiguous-width probe), OSC 10/11 colours, XTQMODKEYS, DECRQM 12 (cursor blink), DECRQSS ' q' (cursor style) and ~40 XTGETTCAP key codes, which the recorder answers. The user moves with jj, w, G, opens a new line with o, types 'Typed in insert mode: héllo 世界', presses Esc, gg, then :wq. On exit vim undoes the modes and leaves the alternate screen." \
  -- vim --clean notes.txt <<'EOF'
[{"expect": "notes\\.txt", "quiet_ms": 500, "timeout": 15, "note": "initial draw, queries answered", "send": "jj"},
 {"quiet_ms": 300, "send": "w"},
 {"quiet_ms": 300, "send": "G"},
 {"quiet_ms": 300, "send": "o"},
 {"expect": "INSERT", "quiet_ms": 300, "send": "Typed in insert mode: héllo 世界"},
 {"quiet_ms": 300, "send": "\u001b"},
 {"quiet_ms": 500, "send": "gg"},
 {"quiet_ms": 300, "send": ":wq\r"},
 {"exit": true}]
EOF
fi

# --------------------------------------------------------------------------
# 2. less
if want less; then
mkdir -p "$WORK/less"
seq -f 'Line %04g: the quick brown fox jumps over the lazy dog' 1 200 \
  | sed '120s/lazy dog/lazy needle/; 150s/brown fox/brown needle/' > "$WORK/less/lines.txt"
record less --cwd "$WORK/less" --program less --version-cmd 'less --version | head -1' \
  --description "less on a 200-line file (lines.txt). less enters the alternate screen (smcup: CSI ?1049h plus XTWINOPS 22;0;0t title push) and keypad mode (CSI ?1h ESC =), shows lines 1-23, the user pages down twice with space (lines 24-46, 47-69), searches /needle which jumps to line 120 and highlights the match in reverse video (CSI 7m ... CSI 27m), then quits with q; less leaves keypad mode and the alternate screen (CSI ?1049l, 23;0;0t). No terminal queries." \
  -- less lines.txt <<'EOF'
[{"expect": "Line 0023", "quiet_ms": 300, "send": " "},
 {"expect": "Line 0046", "quiet_ms": 300, "send": " "},
 {"expect": "Line 0069", "quiet_ms": 300, "send": "/needle\r"},
 {"expect": "\u001b\\[7mneedle", "quiet_ms": 300, "send": "q"},
 {"exit": true}]
EOF
fi

# --------------------------------------------------------------------------
# 3. htop
if want htop; then
mkdir -p "$WORK/htop"
record htop --cwd "$WORK/htop" --program htop --version-cmd 'htop --version | head -1' \
  --description "htop 3 (ncurses) with default settings. It enters the alternate screen, keypad mode, hides the cursor and enables mouse reporting (CSI ?1000h with SGR encoding ?1006h), draws meters and the process list with many SGR colours, then refreshes twice (default 1.5 s delay; the recorder waits for new output each time). The user presses F2 (ESC O Q) to open the Setup screen, Esc to leave it, and q to quit; htop disables the mouse and leaves the alternate screen. The process list shows whatever ran on the recording machine. No terminal queries." \
  -- htop <<'EOF'
[{"expect": "F10", "quiet_ms": 300, "timeout": 15, "note": "first full draw"},
 {"fresh": true, "expect": ".", "quiet_ms": 300, "timeout": 5, "note": "first refresh"},
 {"fresh": true, "expect": ".", "quiet_ms": 300, "timeout": 5, "note": "second refresh", "send": "\u001bOQ"},
 {"expect": "Setup", "quiet_ms": 300, "note": "F2 setup screen", "send": "\u001b"},
 {"quiet_ms": 500, "send": "q"},
 {"exit": true}]
EOF
fi

# --------------------------------------------------------------------------
# 4. top
if want top; then
mkdir -p "$WORK/top"
record top --cwd "$WORK/top" --program top --version-cmd 'top -V' \
  --description "procps-ng top -d 0.5. top does not use the alternate screen: it enables keypad mode (CSI ?1h ESC =), hides the cursor, clears the screen and draws the summary and task list with bold/reverse SGR and ESC ( B; it redraws the whole screen every 0.5 s (the recorder waits for the third 'top - HH:MM:SS' header, i.e. two refreshes), then the user presses q and top shows the cursor, leaves keypad mode and moves to the bottom line. No terminal queries." \
  -- top -d 0.5 <<'EOF'
[{"expect": "top - \\d\\d:\\d\\d:\\d\\d", "count": 3, "timeout": 15, "note": "initial draw + 2 refreshes"},
 {"quiet_ms": 200, "send": "q"},
 {"exit": true}]
EOF
fi

# --------------------------------------------------------------------------
# 5. tmux
if want tmux; then
mkdir -p "$WORK/tmux"
record tmux --cwd "$WORK/tmux" --env 'TMUX_TMPDIR={HOME}' --env 'SHELL=/bin/sh' \
  --program tmux --version-cmd 'tmux -V' \
  --description "tmux client and a fresh server (-f /dev/null, -L fixture, socket directory inside the private HOME), with 'set -g mouse on' and 'set -g focus-events on' so the outer terminal gets mouse (1000/1002/1006) and focus (1004) enabled. tmux enters the alternate screen, keypad mode, sets scroll region, queries DA2 (CSI >c) and XTVERSION (CSI >q); the XTVERSION reply 'XTerm(388)' makes it turn on its XTerm feature set (DECSLRM 69, 7727, extended keys CSI >4m ...). The pane runs /bin/sh (prompt '# '); the user runs 'echo hello', then C-b : kill-server Enter. The client resets every mode, leaves the alternate screen and prints '[server exited]' (exit status 1). The status line shows the host name and clock of the recording machine." \
  -- tmux -f /dev/null -L fixture new-session \; set -g mouse on \; set -g focus-events on <<'EOF'
[{"expect": "[#$] ", "quiet_ms": 500, "timeout": 15, "note": "shell prompt drawn inside tmux", "send": "echo hello\r"},
 {"expect": "hello.*[#$] ", "quiet_ms": 300, "send": "\u0002"},
 {"quiet_ms": 300, "send": ":"},
 {"expect": ":", "quiet_ms": 300, "send": "kill-server\r"},
 {"exit": true}]
EOF
fi

# --------------------------------------------------------------------------
# 6. git log
if want git-log; then
mkdir -p "$WORK/git-log/repo"
(
    cd "$WORK/git-log/repo"
    export GIT_AUTHOR_NAME="Ada Tester" GIT_AUTHOR_EMAIL="ada@example.com"
    export GIT_COMMITTER_NAME="Ada Tester" GIT_COMMITTER_EMAIL="ada@example.com"
    n=0
    commit() {
        n=$((n + 1)); local d; d="2024-01-$(printf %02d $n)T12:00:00+0000"
        GIT_AUTHOR_DATE="$d" GIT_COMMITTER_DATE="$d" git commit -q -m "$1"
    }
    git init -q -b main .
    for i in 1 2 3 4 5 6 7 8; do
        printf 'line %s\n' $(seq 1 $i) > notes.txt; printf 'fn v%s() {}\n' $i >> src.rs
        git add -A; commit "Add step $i to notes"
    done
    GIT_COMMITTER_DATE=2024-01-08T13:00:00+0000 git tag -a v0.1 -m "Release 0.1"
    git checkout -q -b feature/parser HEAD~3
    for i in 1 2 3; do printf 'parser change %s\n' $i >> parser.txt; git add -A; commit "Parser: change $i"; done
    git checkout -q main
    for i in 9 10 11; do printf 'line %s\n' $i >> notes.txt; git add -A; commit "Add step $i to notes"; done
    GIT_AUTHOR_DATE=2024-01-20T12:00:00+0000 GIT_COMMITTER_DATE=2024-01-20T12:00:00+0000 \
        git merge -q --no-ff feature/parser -m "Merge branch 'feature/parser'"
    printf 'Ünïcödé line: 日本語\n' >> notes.txt; git add -A; n=20; commit "Add unicode line"
    git tag v0.2
)
record git-log --cwd "$WORK/git-log/repo" --program git --version-cmd 'git --version' \
  --description "In a generated repository with 16 commits (fixed author, committer and dates, so the hashes are stable), a merged branch feature/parser, an annotated tag v0.1 and a lightweight tag v0.2, runs 'git --no-pager -c color.ui=always log --graph --decorate --oneline --all' (coloured graph lines, decorations in bold colours) and then 'git --no-pager -c color.ui=always log -p -3' (commit headers in yellow, diff headers bold, hunks cyan, added lines green, including a UTF-8 line with accents and CJK). Plain line output with CRLF from the tty's ONLCR, many SGR sequences (CSI m resets), no queries, no mode changes." \
  -- sh -c 'git --no-pager -c color.ui=always log --graph --decorate --oneline --all && git --no-pager -c color.ui=always log -p -3' <<'EOF'
[{"exit": true, "timeout": 20}]
EOF
fi

# --------------------------------------------------------------------------
# 7. python REPL
if want python-repl; then
mkdir -p "$WORK/python-repl"
record python-repl --cwd "$WORK/python-repl" --program python3 --version-cmd 'python3 --version' \
  --description "Interactive 'python3 -q' (GNU readline line editing; CPython turns readline's bracketed paste off, so no 2004). The user defines greet() over two continuation lines ('... ' prompts), prints a string with CJK (世界), emoji (🎉🐍 - wide, 4-byte UTF-8), Latin accents and Hangul, triggers a KeyError traceback, then exit(). Input echo comes from readline; output is plain text with CRLF line ends. No escape sequences at all." \
  -- python3 -q <<'EOF'
[{"expect": ">>> ", "send": "def greet(name):\r"},
 {"expect": "\\.\\.\\. ", "send": "    return f'hello, {name}!'\r"},
 {"expect": "\\.\\.\\. ", "send": "\r"},
 {"expect": ">>> ", "send": "print(greet('世界'), '🎉🐍', 'naïve café', '한국어')\r"},
 {"expect": "한국어\r\n.*>>> ", "send": "{'a': 1}['missing'] / 0\r"},
 {"expect": "KeyError.*>>> ", "send": "exit()\r"},
 {"exit": true}]
EOF
fi

# --------------------------------------------------------------------------
# 8. progress bars
if want progress-curl; then
mkdir -p "$WORK/progress-curl/www"
truncate -s 100M "$WORK/progress-curl/www/big.bin"
python3 -u -m http.server --bind 127.0.0.1 --directory "$WORK/progress-curl/www" 0 \
    > "$WORK/progress-curl/http.log" 2>&1 &
HTTP_PID=$!
trap 'kill "$HTTP_PID" 2>/dev/null || true' EXIT
PORT=
for _ in $(seq 100); do   # wait for "Serving HTTP on 127.0.0.1 port N"
    PORT=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$WORK/progress-curl/http.log" | head -1)
    [ -n "$PORT" ] && break
    kill -0 "$HTTP_PID" || { echo "http.server died" >&2; exit 1; }
    sleep 0.05
done
[ -n "$PORT" ] || { echo "http.server did not start" >&2; exit 1; }
record progress-curl --cwd "$WORK/progress-curl" --program curl --version-cmd 'curl --version | head -1' \
  --description "curl --progress-bar downloading a 100 MiB file from a local 'python3 -m http.server' at --limit-rate 20M (about 5 s). curl redraws its '####...   NN.N%' bar on stderr: each update starts with CR and rewrites the full 80-column line (no erase sequences), ending with '100.0%' and CR LF. (With the suggested 20 MB at 5M curl only redrew 5 times, because with rate limiting it updates about once per second; 100M at 20M gives ~16 redraws in the same time.) The URL's port differs between recordings; it is not shown in the output." \
  -- curl --progress-bar --limit-rate 20M -o /dev/null "http://127.0.0.1:$PORT/big.bin" <<'EOF'
[{"exit": true, "timeout": 60}]
EOF
kill "$HTTP_PID" 2>/dev/null || true
wait "$HTTP_PID" 2>/dev/null || true
trap - EXIT
rm -f "$WORK/progress-curl/www/big.bin"
fi

if want progress-python; then
mkdir -p "$WORK/progress-python"
PROG=$(cat <<'PY'
import sys, time
w = sys.stdout.buffer.write
total = 500
for i in range(total + 1):
    pct = i * 100 // total
    fill = i * 20 // total
    w(b"\r%3d%%|%s%s| %d/%d\x1b[K" % (pct, b"#" * fill, b" " * (20 - fill), i, total))
    sys.stdout.flush()
    time.sleep(0.002)
w(b"\n")
w(b"Downloading tether-0.1.0.tar.gz\n")
w(b"\x1b[?25l")
for i in range(101):
    done = i * 40 // 100
    bar = "\u2501" * done
    rest = ("\u257a" + "\u2501" * (39 - done)) if done < 40 else ""
    line = ("\r   \x1b[38;2;249;38;114m%s\x1b[0m\x1b[38;5;237m%s\x1b[0m "
            "\x1b[32m%.1f/10.0 MB\x1b[0m \x1b[31m5.0 MB/s\x1b[0m eta \x1b[36m0:00:%02d\x1b[0m\x1b[K"
            % (bar, rest, i / 10, (100 - i) // 50))
    w(line.encode())
    sys.stdout.flush()
    time.sleep(0.005)
w(b"\x1b[?25h\n")
sys.stdout.flush()
PY
)
record progress-python --cwd "$WORK/progress-python" --program python3 --version-cmd 'python3 --version' \
  --description "A python3 -c script imitating two progress bars. Part 1, tqdm-like: 501 redraws of '\\r NN%|#####     | i/500' each followed by CSI K (erase to end of line), then LF. Part 2, pip/rich-like: hides the cursor (CSI ?25l), prints 101 redraws of '\\r   ━━━━╺━━━ x.y/10.0 MB 5.0 MB/s eta 0:00:0N' using truecolor (38;2;249;38;114), 256-colour (38;5;237) and basic SGR colours plus CSI K, then shows the cursor again (CSI ?25h) and LF. The text is deterministic (no real timings)." \
  -- python3 -c "$PROG" <<'EOF'
[{"exit": true, "timeout": 30}]
EOF
fi

# --------------------------------------------------------------------------
# 9. echo leak
if want echo-leak; then
mkdir -p "$WORK/echo-leak"
LEAK=$(cat <<'SH'
stty raw -echo
printf '\033]0;tether echo-leak\007'
printf '\033[1;31mred\033[0m '
printf '\033[c\033[>c\033]11;?\007\033[6n\033[?u\033P+q544e\033\\'
python3 -c 'import os
while True:
    b = os.read(0, 4096)
    end = b"\x04" in b
    os.write(1, b.split(b"\x04")[0])
    if end or not b:
        break'
printf '\r\n\033]8;;https://example.com/tether\033\\tether link\033]8;;\033\\\r\n'
printf '\033]52;c;aGVsbG8=\007\033]11;#102030\007\033[38;5;42mgreen\033[m \033[48;2;16;32;48mtruecolor\033[m\r\n'
stty sane
SH
)
record echo-leak --cwd "$WORK/echo-leak" --program sh --version-cmd "dpkg-query -W dash coreutils python3 | tr '\\t\\n' ' '" \
  --description "A program that echoes its input raw, which is how terminal replies leak onto the screen. sh puts the tty in raw mode without echo (stty raw -echo), writes a title (OSC 0), some SGR text, then six queries in one write: DA1, DA2, OSC 11 '?' (BEL-terminated), CPR, the Kitty keyboard query CSI ?u and XTGETTCAP for TN. The recorder answers each; a python3 loop then copies every byte it reads from the tty to stdout, so the six replies appear verbatim in output.bin right after the queries. After a quiet period the user presses Ctrl-D (not echoed) and sh writes things a reply filter must NOT remove: an OSC 8 hyperlink, an OSC 52 clipboard write, an OSC 11 background colour set, 256-colour and truecolor SGR. The 'sequences' list in this file gives the offset, bytes and role (write / query / reply) of every escape sequence in output.bin." \
  -- sh -c "$LEAK" <<'EOF'
[{"expect": "\u001bP1\\+r544e=[0-9A-F]*\u001b\\\\", "quiet_ms": 300, "note": "all six replies echoed back", "send": "\u0004"},
 {"exit": true}]
EOF
if [ -f "$FIX/echo-leak/meta.json" ] && [[ " ${FAILED[*]-} " != *" echo-leak "* ]]; then
python3 - "$FIX/echo-leak" <<'PY'
import json, re, sys
d = sys.argv[1]
out = open(d + "/output.bin", "rb").read()
meta = json.load(open(d + "/meta.json"))
events = json.load(open(d + "/events.json"))
replies = [e for e in events if e["type"] == "reply"]
query_ends = {e["output_offset"]: e for e in replies}
pending = [bytes.fromhex(e["reply_hex"]) for e in replies]
def esc(b):
    return "".join("\\e" if c == 27 else "\\\\" if c == 92 else chr(c) if 32 <= c < 127
                   else "\\x%02x" % c for c in b)
seq_re = re.compile(rb"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|P[^\x1b]*\x1b\\|[()][0-~]|[=>78c])")
seqs = []
for m in seq_re.finditer(out):
    b = m.group(0)
    item = {"offset": m.start(), "length": len(b), "bytes": esc(b)}
    if m.end() in query_ends and b == bytes.fromhex(query_ends[m.end()]["query_hex"]):
        e = query_ends[m.end()]
        item["role"] = "query"
        item["query_name"] = e["query_name"]
        item["answered_by"] = e["reply"]
    elif pending and b == pending[0]:
        item["role"] = "reply"
        item["note"] = "terminal reply, read by the program from the tty and echoed raw"
        pending.pop(0)
    else:
        item["role"] = "write"
    seqs.append(item)
assert not pending, "not every reply was found echoed in output.bin"
meta["sequences"] = seqs
meta["replies_in_output"] = [s for s in seqs if s["role"] == "reply"]
meta["must_not_be_filtered"] = [s for s in seqs if s["role"] != "reply"]
with open(d + "/meta.json", "w") as f:
    json.dump(meta, f, indent=2, ensure_ascii=False)
    f.write("\n")
PY
fi
fi

# --------------------------------------------------------------------------
# 10. kitty keyboard + modes left enabled at exit
if want kitty-keyboard; then
mkdir -p "$WORK/kitty-keyboard"
# readline would otherwise turn bracketed paste on/off around every prompt
# (and leave it off at exit); this fixture wants the user's 2004h to stick.
printf 'set enable-bracketed-paste off\n' > "$WORK/kitty-keyboard/inputrc"
record kitty-keyboard --cwd "$WORK/kitty-keyboard" --env 'PS1=$ ' --env "INPUTRC=$WORK/kitty-keyboard/inputrc" \
  --env 'SHELL=/bin/bash' --program bash --version-cmd 'bash --version | head -1' \
  --meta-json '{"expected_final_state": {"alternate_screen": "active (entered with CSI ?1049h, never left)", "kitty_keyboard": {"main_screen_stack": [15], "alternate_screen_stack": [5], "active_flags": 5, "explanation": "CSI >15u pushes 15 on the main-screen stack; after CSI ?1049h the alternate screen has its own stack: CSI >1u pushes 1, CSI =5;1u replaces the top with 5"}, "bracketed_paste_2004": "on", "mouse": {"1000": "on", "1006": "on", "1002": "off", "1003": "off"}, "focus_1004": "on", "modifyOtherKeys": 2}}' \
  --description "bash --norc --noprofile -i with PS1='\$ ' and an inputrc that turns readline's own bracketed-paste handling off. The user runs three printf commands and then exit, leaving everything enabled: (1) printf '\\033[>15u' pushes Kitty keyboard flags 15 on the main screen; (2) printf '\\033[?1049h\\033[>1u\\033[=5;1u' switches to the alternate screen, pushes flags 1 there, then sets them to 5 (mode 1 = replace); (3) printf '\\033[?2004h\\033[?1000h\\033[?1006h\\033[?1004h\\033[>4;2m' enables bracketed paste, mouse 1000 with SGR encoding, focus events and modifyOtherKeys 2. bash prints 'exit' and ends without resetting anything, so a terminal must clean up itself. Expected final state: see expected_final_state." \
  -- bash --norc --noprofile -i <<'EOF'
[{"expect": "\\$ $", "timeout": 10, "send": "printf '\\033[>15u'\r"},
 {"expect": "\u001b\\[>15u.*\\$ $", "send": "printf '\\033[?1049h\\033[>1u\\033[=5;1u'\r"},
 {"expect": "\u001b\\[=5;1u.*\\$ $", "send": "printf '\\033[?2004h\\033[?1000h\\033[?1006h\\033[?1004h\\033[>4;2m'\r"},
 {"expect": "\u001b\\[>4;2m.*\\$ $", "send": "exit\r"},
 {"exit": true}]
EOF
fi

if [ "${#FAILED[@]}" -gt 0 ]; then
    echo "FAILED fixtures: ${FAILED[*]}" >&2
    exit 1
fi
echo "all fixtures recorded in $FIX" >&2
