#!/usr/bin/env python3
"""Record the raw terminal output of a real program running in a PTY.

The recorder behaves like a small xterm-compatible terminal emulator:

* it starts the command on a fresh PTY (given rows/cols) as the session
  leader with the PTY as its controlling terminal, in a clean environment
  (HOME is a fresh temporary directory, LANG=C.UTF-8, TERM as requested);
* it records every byte the program writes to the PTY master, in order,
  into ``output.bin``;
* it answers terminal queries found in the output (DA1/DA2/DA3, CPR, DSR,
  DECRQM, Kitty keyboard query, OSC 4/10/11/12 colour queries, XTGETTCAP,
  DECRQSS, XTVERSION, XTWINOPS size reports) the way an xterm would, by
  writing the reply into the PTY input.  Queries split across reads are
  handled because the output is run through a byte-at-a-time VT parser;
* it drives the program with a scripted list of input steps.  Each step
  waits for a condition (a regex over the output produced since the previous
  step, a count of matches, a quiet period, or the program's exit) and then
  sends bytes;
* every byte written to the PTY input (replies and scripted input) is
  recorded in ``input.bin``, and ``events.json`` logs each step and each
  reply with timestamps and the output/input byte offsets at which they
  happened;
* it stops when the program exits (EIO on the master).  If the global
  deadline passes first, or a step's condition is not met in time, the
  process group (and any daemon that inherited the private HOME, such as a
  tmux server) is killed and the recorder exits non-zero.  A failed
  recording is left in ``<out>.failed`` for inspection and never replaces a
  good fixture.

Steps (JSON list, from --steps FILE or --steps - for stdin), each an object:

  {"expect": "regex"}         wait until the regex (Python ``re`` on bytes,
                              pattern given as a str, UTF-8 encoded) matches
                              output produced since the later of the last
                              send and the end of the last match
  {"expect": "...", "count": N}   ... until it matched N times (non-overlapping)
  {"quiet_ms": 300}           wait until no output has arrived for 300 ms
                              (may be combined with "expect": expect first)
  {"exit": true}              wait for the program to exit (must be last)
  "fresh": true               only look at output that arrives after the step
                              starts (e.g. "wait for the next refresh")
  "timeout": seconds          per-step deadline (default 10)
  "optional": true            on timeout continue instead of failing
  "send": "bytes"             sent after the condition is met (UTF-8 encoded;
                              use JSON escapes such as \\u001b and \\r)
  "note": "..."               free text copied to the log

Stdlib only.
"""

import argparse
import datetime
import fcntl
import json
import os
import re
import select
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time
import unicodedata

RECORDER_VERSION = "1"
CLEAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
ESC = b"\x1b"
ST = b"\x1b\\"

# --------------------------------------------------------------------------
# helpers


def esc_bytes(b):
    """Readable, unambiguous rendering of bytes: printable ASCII as is,
    ESC as \\e, backslash doubled, everything else as \\xNN."""
    out = []
    for c in b:
        if c == 0x1B:
            out.append("\\e")
        elif c == 0x5C:
            out.append("\\\\")
        elif 0x20 <= c < 0x7F:
            out.append(chr(c))
        else:
            out.append("\\x%02x" % c)
    return "".join(out)


def char_width(cp):
    if cp < 0x20:
        return 0
    ch = chr(cp)
    cat = unicodedata.category(ch)
    if cat in ("Mn", "Me", "Cf") or cp == 0x200B:
        return 0
    if unicodedata.east_asian_width(ch) in ("W", "F"):
        return 2
    return 1


# xterm-256color values an XTerm(388) reports for XTGETTCAP, by termcap and
# terminfo name.  Unknown names get DCS 0 + r ST.
TCAP = {
    "TN": "xterm-256color", "name": "xterm-256color",
    "Co": "256", "colors": "256",
    "ku": "\x1bOA", "kcuu1": "\x1bOA",
    "kd": "\x1bOB", "kcud1": "\x1bOB",
    "kr": "\x1bOC", "kcuf1": "\x1bOC",
    "kl": "\x1bOD", "kcub1": "\x1bOD",
    "kh": "\x1bOH", "khome": "\x1bOH",
    "@7": "\x1bOF", "kend": "\x1bOF",
    "kI": "\x1b[2~", "kich1": "\x1b[2~",
    "kD": "\x1b[3~", "kdch1": "\x1b[3~",
    "kP": "\x1b[5~", "kpp": "\x1b[5~",
    "kN": "\x1b[6~", "knp": "\x1b[6~",
    "kb": "\x7f", "kbs": "\x7f",
    "kB": "\x1b[Z", "kcbt": "\x1b[Z",
    "K1": "\x1bOw", "ka1": "\x1bOw",
    "K3": "\x1bOy", "ka3": "\x1bOy",
    "K4": "\x1bOq", "kc1": "\x1bOq",
    "K5": "\x1bOs", "kc3": "\x1bOs",
    "K2": "\x1bOE", "kb2": "\x1bOE",
    "#2": "\x1b[1;2H", "kHOM": "\x1b[1;2H",
    "*7": "\x1b[1;2F", "kEND": "\x1b[1;2F",
    "#4": "\x1b[1;2D", "kLFT": "\x1b[1;2D",
    "%i": "\x1b[1;2C", "kRIT": "\x1b[1;2C",
    "k1": "\x1bOP", "kf1": "\x1bOP",
    "k2": "\x1bOQ", "kf2": "\x1bOQ",
    "k3": "\x1bOR", "kf3": "\x1bOR",
    "k4": "\x1bOS", "kf4": "\x1bOS",
    "k5": "\x1b[15~", "kf5": "\x1b[15~",
    "k6": "\x1b[17~", "kf6": "\x1b[17~",
    "k7": "\x1b[18~", "kf7": "\x1b[18~",
    "k8": "\x1b[19~", "kf8": "\x1b[19~",
    "k9": "\x1b[20~", "kf9": "\x1b[20~",
    "k;": "\x1b[21~", "kf10": "\x1b[21~",
    "F1": "\x1b[23~", "kf11": "\x1b[23~",
    "F2": "\x1b[24~", "kf12": "\x1b[24~",
}

# DEC private modes that are set in a freshly started xterm.
DEFAULT_PRIVATE_MODES = {7, 25}


class Terminal:
    """A byte-at-a-time VT parser that tracks just enough state (cursor
    position, DEC private modes) to answer queries like an xterm."""

    def __init__(self, rows, cols, reply_cb):
        self.rows, self.cols = rows, cols
        self.reply_cb = reply_cb  # (name, query_bytes, reply_bytes)
        self.state = "ground"
        self.seq = bytearray()  # bytes of the current escape sequence
        self.row = self.col = 0
        self.pending_wrap = False
        self.saved = (0, 0)
        self.saved_1049 = (0, 0)
        self.modes = set(DEFAULT_PRIVATE_MODES)
        self.modkeys = {}  # XTMODKEYS resource -> value (modifyOtherKeys is 4)
        self.utf8_need = 0
        self.utf8_cp = 0
        self.string_limit = 1 << 20

    # ---- cursor model
    def _linefeed(self):
        if self.row < self.rows - 1:
            self.row += 1

    def _print(self, cp):
        w = char_width(cp)
        if w == 0:
            return
        if self.pending_wrap or self.col + w > self.cols:
            self.col = 0
            self.pending_wrap = False
            self._linefeed()
        self.col += w
        if self.col >= self.cols:
            self.col = self.cols - 1
            self.pending_wrap = True

    def _execute(self, c):
        if c == 0x0D:
            self.col = 0
            self.pending_wrap = False
        elif c in (0x0A, 0x0B, 0x0C):
            self._linefeed()
            self.pending_wrap = False
        elif c == 0x08:
            self.col = max(0, self.col - 1)
            self.pending_wrap = False
        elif c == 0x09:
            self.col = min(self.cols - 1, (self.col // 8 + 1) * 8)

    def _clamp(self):
        self.row = max(0, min(self.rows - 1, self.row))
        self.col = max(0, min(self.cols - 1, self.col))
        self.pending_wrap = False

    # ---- feeding
    def feed(self, data):
        for c in data:
            self._byte(c)

    def _byte(self, c):
        st = self.state
        if st == "ground":
            if c == 0x1B:
                self.state = "esc"
                self.seq = bytearray(b"\x1b")
                self.utf8_need = 0
            elif c < 0x20 or c == 0x7F:
                self.utf8_need = 0
                self._execute(c)
            elif c < 0x80:
                self.utf8_need = 0
                self._print(c)
            elif 0xC0 <= c < 0xF8:
                self.utf8_need = 1 if c < 0xE0 else (2 if c < 0xF0 else 3)
                self.utf8_cp = c & (0x1F if c < 0xE0 else (0x0F if c < 0xF0 else 0x07))
            elif 0x80 <= c < 0xC0 and self.utf8_need:
                self.utf8_cp = (self.utf8_cp << 6) | (c & 0x3F)
                self.utf8_need -= 1
                if self.utf8_need == 0:
                    self._print(self.utf8_cp)
            else:
                self.utf8_need = 0
                self._print(0xFFFD)
            return

        # inside some escape sequence
        if c in (0x18, 0x1A):  # CAN / SUB abort
            self.state = "ground"
            return
        if st == "esc":
            self.seq.append(c)
            if c == 0x5B:
                self.state = "csi"
            elif c == 0x5D:
                self.state = "osc"
            elif c == 0x50:
                self.state = "dcs"
            elif c in (0x58, 0x5E, 0x5F):  # SOS PM APC
                self.state = "str"
            elif 0x20 <= c <= 0x2F:
                self.state = "esc_int"
            elif c == 0x1B:
                self.seq = bytearray(b"\x1b")
            elif c < 0x20:
                self.seq.pop()
                self._execute(c)
            else:
                self._esc_dispatch(c)
                self.state = "ground"
        elif st == "esc_int":
            if c < 0x20:
                self._execute(c)
            elif c == 0x1B:
                self.state = "esc"
                self.seq = bytearray(b"\x1b")
            else:
                self.seq.append(c)
                if c >= 0x30:
                    self.state = "ground"
        elif st == "csi":
            if c == 0x1B:
                self.state = "esc"
                self.seq = bytearray(b"\x1b")
            elif c < 0x20:
                self._execute(c)
            else:
                self.seq.append(c)
                if 0x40 <= c <= 0x7E:
                    self.state = "ground"
                    self._csi_dispatch(bytes(self.seq))
                elif len(self.seq) > 512:
                    self.state = "ground"
        elif st in ("osc", "dcs", "str"):
            if c == 0x1B:
                self.state = st + "_esc"
            elif c == 0x07 and st == "osc":
                self.state = "ground"
                self._osc_dispatch(bytes(self.seq[2:]), b"\x07")
            else:
                if len(self.seq) < self.string_limit:
                    self.seq.append(c)
        elif st in ("osc_esc", "dcs_esc", "str_esc"):
            base = st[:-4]
            if c == 0x5C:
                self.state = "ground"
                if base == "osc":
                    self._osc_dispatch(bytes(self.seq[2:]), ST)
                elif base == "dcs":
                    self._dcs_dispatch(bytes(self.seq[2:]))
            else:
                # ESC not followed by '\': string aborted, new sequence starts
                self.state = "esc"
                self.seq = bytearray(b"\x1b")
                self._byte(c)

    # ---- dispatchers
    def _reply(self, name, query, reply):
        self.reply_cb(name, query, reply)

    def _esc_dispatch(self, c):
        if c == 0x37:  # DECSC
            self.saved = (self.row, self.col)
        elif c == 0x38:  # DECRC
            self.row, self.col = self.saved
            self._clamp()
        elif c == 0x44:  # IND
            self._linefeed()
        elif c == 0x45:  # NEL
            self.col = 0
            self._linefeed()
        elif c == 0x4D:  # RI
            self.row = max(0, self.row - 1)
        elif c == 0x63:  # RIS
            self.row = self.col = 0
            self.modes = set(DEFAULT_PRIVATE_MODES)
        self.pending_wrap = False

    def _csi_dispatch(self, seq):
        body = seq[2:-1]
        final = chr(seq[-1])
        prefix = ""
        if body[:1] in (b"<", b"=", b">", b"?"):
            prefix = chr(body[0])
            body = body[1:]
        m = re.match(rb"^([0-9:;]*)([ -/]*)$", body)
        if not m:
            return
        params_s, inter = m.group(1).decode(), m.group(2).decode()
        params = []
        for p in params_s.split(";") if params_s else []:
            p = p.split(":")[0]
            params.append(int(p) if p.isdigit() else 0)

        def P(i, default):
            return params[i] if len(params) > i and params[i] else default

        if prefix == "" and inter == "":
            if final in "Hf":
                self.row, self.col = P(0, 1) - 1, P(1, 1) - 1
                self._clamp()
            elif final == "A":
                self.row -= P(0, 1); self._clamp()
            elif final in "Be":
                self.row += P(0, 1); self._clamp()
            elif final in "Ca":
                self.col += P(0, 1); self._clamp()
            elif final == "D":
                self.col -= P(0, 1); self._clamp()
            elif final == "E":
                self.row += P(0, 1); self.col = 0; self._clamp()
            elif final == "F":
                self.row -= P(0, 1); self.col = 0; self._clamp()
            elif final in "G`":
                self.col = P(0, 1) - 1; self._clamp()
            elif final == "d":
                self.row = P(0, 1) - 1; self._clamp()
            elif final == "r":
                self.row = self.col = 0; self._clamp()
            elif final == "s" and not params:
                self.saved = (self.row, self.col)
            elif final == "u" and not params:
                self.row, self.col = self.saved; self._clamp()
            elif final == "c" and P(0, 0) == 0:
                self._reply("DA1", seq, b"\x1b[?62;22c")
            elif final == "n" and P(0, 0) == 6:
                self._reply("CPR", seq, b"\x1b[%d;%dR" % (self.row + 1, self.col + 1))
            elif final == "n" and P(0, 0) == 5:
                self._reply("DSR", seq, b"\x1b[0n")
            elif final == "t" and P(0, 0) == 18:
                self._reply("XTWINOPS-18", seq, b"\x1b[8;%d;%dt" % (self.rows, self.cols))
            elif final == "t" and P(0, 0) == 14:
                self._reply("XTWINOPS-14", seq, b"\x1b[4;%d;%dt" % (self.rows * 16, self.cols * 8))
            elif final == "t" and P(0, 0) == 16:
                self._reply("XTWINOPS-16", seq, b"\x1b[6;16;8t")
        elif prefix == "" and inter == "$" and final == "p":
            self._reply("DECRQM-ANSI", seq, b"\x1b[%d;2$y" % P(0, 0))
        elif prefix == "?" and inter == "" and final in "hl":
            for p in params:
                if final == "h":
                    if p == 1049 and 1049 not in self.modes:
                        self.saved_1049 = (self.row, self.col)
                    self.modes.add(p)
                else:
                    if p == 1049 and 1049 in self.modes:
                        self.row, self.col = self.saved_1049
                        self._clamp()
                    self.modes.discard(p)
        elif prefix == "?" and inter == "$" and final == "p":
            mode = P(0, 0)
            state = 1 if mode in self.modes else 2
            self._reply("DECRQM", seq, b"\x1b[?%d;%d$y" % (mode, state))
        elif prefix == "?" and inter == "" and final == "n" and P(0, 0) == 6:
            self._reply("DECXCPR", seq, b"\x1b[?%d;%d;1R" % (self.row + 1, self.col + 1))
        elif prefix == "?" and inter == "" and final == "u" and not params_s:
            self._reply("KITTY-KBD-QUERY", seq, b"\x1b[?0u")
        elif prefix == ">" and inter == "" and final == "c" and P(0, 0) == 0:
            self._reply("DA2", seq, b"\x1b[>41;380;0c")
        elif prefix == "=" and inter == "" and final == "c" and P(0, 0) == 0:
            self._reply("DA3", seq, b"\x1bP!|00000000\x1b\\")
        elif prefix == ">" and inter == "" and final == "m":
            # XTMODKEYS: CSI > Pp ; Pv m sets, CSI > Pp m resets
            if params:
                if len(params) > 1 and params_s.split(";")[1] != "":
                    self.modkeys[params[0]] = params[1]
                else:
                    self.modkeys.pop(params[0], None)
            else:
                self.modkeys.clear()
        elif prefix == "?" and inter == "" and final == "m" and params:
            # XTQMODKEYS
            self._reply("XTQMODKEYS", seq, b"\x1b[>%d;%dm" % (params[0],
                                                              self.modkeys.get(params[0], 0)))
        elif prefix == ">" and inter == "" and final == "q" and P(0, 0) == 0:
            self._reply("XTVERSION", seq, b"\x1bP>|XTerm(388)\x1b\\")

    def _osc_dispatch(self, payload, term):
        query = b"\x1b]" + payload + term
        parts = payload.split(b";")
        if not parts or not parts[0].isdigit():
            return
        num = int(parts[0])
        if num in (10, 11, 12, 17, 19):
            # OSC 10;?;? queries 10 and 11 in one go ("dynamic colours")
            colors = {10: b"rgb:0000/0000/0000", 11: b"rgb:ffff/ffff/ffff",
                      12: b"rgb:0000/0000/0000", 17: b"rgb:0000/0000/0000",
                      19: b"rgb:ffff/ffff/ffff"}
            n = num
            for arg in parts[1:]:
                if arg == b"?" and n in colors:
                    self._reply("OSC-%d-QUERY" % n, query,
                                b"\x1b]%d;%s%s" % (n, colors[n], term))
                n += 1
        elif num == 4:
            args = parts[1:]
            for i in range(0, len(args) - 1, 2):
                if args[i + 1] == b"?" and args[i].isdigit():
                    self._reply("OSC-4-QUERY", query,
                                b"\x1b]4;%s;rgb:0000/0000/0000%s" % (args[i], term))

    def _dcs_dispatch(self, payload):
        query = b"\x1bP" + payload + ST
        if payload.startswith(b"+q"):
            for name_hex in payload[2:].split(b";"):
                try:
                    name = bytes.fromhex(name_hex.decode()).decode("latin-1")
                except ValueError:
                    name = None
                if name is not None and name in TCAP:
                    val = TCAP[name].encode("latin-1").hex().upper().encode()
                    self._reply("XTGETTCAP", query,
                                b"\x1bP1+r" + name_hex + b"=" + val + ST)
                else:
                    self._reply("XTGETTCAP", query, b"\x1bP0+r" + name_hex + ST)
        elif payload.startswith(b"$q"):
            what = payload[2:]
            answers = {
                b"m": b"0m",
                b"r": b"1;%dr" % self.rows,
                b"s": b"1;%ds" % self.cols,
                b" q": b"2 q",
                b'"p': b'62;1"p',
                b'"q': b'0"q',
                b"t": b"%dt" % self.rows,
            }
            if what in answers:
                self._reply("DECRQSS", query, b"\x1bP1$r" + answers[what] + ST)
            else:
                self._reply("DECRQSS", query, b"\x1bP0$r" + ST)


# --------------------------------------------------------------------------
# recording


class RecordingError(Exception):
    pass


def find_procs_with_home(home):
    """PIDs of processes whose environment has our private HOME (this
    catches daemons such as a tmux server that left our process group)."""
    marker = b"HOME=" + home.encode()
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            with open("/proc/%s/environ" % d, "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if marker in env:
            pids.append(int(d))
    return pids


def kill_leftovers(home, pgid=None):
    killed = []
    if pgid is not None:
        try:
            os.killpg(pgid, signal.SIGKILL)
            killed.append("pgid %d" % pgid)
        except ProcessLookupError:
            pass
    for pid in find_procs_with_home(home):
        try:
            os.kill(pid, signal.SIGKILL)
            killed.append("pid %d" % pid)
        except ProcessLookupError:
            pass
    return killed


class Recorder:
    def __init__(self, args, steps):
        self.args = args
        self.steps = steps
        self.output = bytearray()
        self.input = bytearray()
        self.events = []
        self.t0 = time.monotonic()
        self.last_output_t = self.t0
        self.search_from = 0
        self.master = None
        self.eof = False

    def now(self):
        return round(time.monotonic() - self.t0, 4)

    def write_input(self, data):
        view = memoryview(data)
        while view:
            try:
                n = os.write(self.master, view)
            except OSError as e:
                raise RecordingError("write to PTY failed: %s" % e)
            view = view[n:]
        self.input.extend(data)

    def on_reply(self, name, query, reply):
        ev = {"t": self.now(), "type": "reply", "query_name": name,
              "output_offset": self._feed_pos, "input_offset": len(self.input),
              "query": esc_bytes(query), "reply": esc_bytes(reply),
              "query_hex": query.hex(), "reply_hex": reply.hex()}
        self.events.append(ev)
        if not self.eof:
            try:
                self.write_input(reply)
            except RecordingError:
                ev["error"] = "could not write reply (program gone)"

    def spawn(self):
        a = self.args
        master, slave = os.openpty()
        attrs = termios.tcgetattr(slave)
        attrs[0] |= getattr(termios, "IUTF8", 0)
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
        fcntl.ioctl(slave, termios.TIOCSWINSZ,
                    struct.pack("HHHH", a.rows, a.cols, a.cols * 8, a.rows * 16))
        pid = os.fork()
        if pid == 0:
            try:
                os.close(master)
                os.setsid()
                fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
                for fd in (0, 1, 2):
                    os.dup2(slave, fd)
                if slave > 2:
                    os.close(slave)
                os.chdir(a.cwd)
                os.execvpe(a.argv[0], a.argv, self.env)
            except BaseException as e:  # noqa
                os.write(2, ("record-fixture: exec failed: %s\r\n" % e).encode())
            os._exit(127)
        os.close(slave)
        self.master = master
        self.pid = pid
        fl = fcntl.fcntl(master, fcntl.F_GETFL)
        fcntl.fcntl(master, fcntl.F_SETFL, fl | os.O_NONBLOCK)

    def pump(self, timeout):
        """Wait up to timeout seconds for output; process what arrives."""
        if self.eof:
            return False
        r, _, _ = select.select([self.master], [], [], max(0.0, timeout))
        if not r:
            return False
        try:
            data = os.read(self.master, 65536)
        except BlockingIOError:
            return False
        except OSError:  # EIO: slave side closed, program gone
            self.eof = True
            return True
        if not data:
            self.eof = True
            return True
        self.last_output_t = time.monotonic()
        base = len(self.output)
        self.output.extend(data)
        # feed byte-by-byte so replies know the exact output offset
        for i, c in enumerate(data):
            self._feed_pos = base + i + 1
            self.term._byte(c)
        return True

    def run(self):
        a = self.args
        self.home = tempfile.mkdtemp(prefix="tether-rec-home-")
        env = {
            "PATH": CLEAN_PATH,
            "HOME": self.home,
            "TERM": a.term,
            "LANG": "C.UTF-8",
            "USER": "root" if os.getuid() == 0 else os.environ.get("USER", "user"),
            "LOGNAME": "root" if os.getuid() == 0 else os.environ.get("USER", "user"),
            "SHELL": "/bin/sh",
        }
        for kv in a.env:
            k, _, v = kv.partition("=")
            env[k] = v.replace("{HOME}", self.home)
        self.env = env
        self.term = Terminal(a.rows, a.cols, self.on_reply)
        self._feed_pos = 0
        global_deadline = self.t0 + a.timeout
        status = None
        try:
            self.spawn()
            self.events.append({"t": self.now(), "type": "spawn", "pid": self.pid})
            for idx, step in enumerate(self.steps):
                self.run_step(idx, step, global_deadline)
            # after the script: wait for the program to exit
            while not self.eof:
                left = global_deadline - time.monotonic()
                if left <= 0:
                    raise RecordingError("global deadline (%ss) passed and the program "
                                         "has not exited" % a.timeout)
                self.pump(min(left, 0.5))
            status = self.reap(global_deadline)
            self.events.append({"t": self.now(), "type": "exit", "status": status,
                                "output_offset": len(self.output)})
            left = kill_leftovers(self.home)
            if left:
                self.events.append({"t": self.now(), "type": "killed-leftovers",
                                    "which": left})
            return status
        except BaseException:
            killed = kill_leftovers(self.home, getattr(self, "pid", None))
            if getattr(self, "pid", None):
                try:
                    self.reap(time.monotonic() + 2)
                except (RecordingError, ChildProcessError):
                    pass
            self.events.append({"t": self.now(), "type": "failed", "killed": killed,
                                "output_offset": len(self.output)})
            raise
        finally:
            if self.master is not None:
                os.close(self.master)
            shutil.rmtree(self.home, ignore_errors=True)

    def reap(self, deadline):
        while True:
            pid, st = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                if os.WIFEXITED(st):
                    return {"exit_code": os.WEXITSTATUS(st)}
                return {"signal": os.WTERMSIG(st)}
            if time.monotonic() > deadline:
                raise RecordingError("PTY closed but the process did not exit "
                                     "before the deadline")
            time.sleep(0.01)

    def run_step(self, idx, step, global_deadline):
        t_start = time.monotonic()
        deadline = min(global_deadline, t_start + float(step.get("timeout", 10)))
        ev = {"t": self.now(), "type": "step", "index": idx}
        for k in ("note", "expect", "count", "fresh", "quiet_ms", "exit"):
            if k in step:
                ev[k] = step[k]
        self.events.append(ev)
        ok = True
        if step.get("fresh"):
            self.search_from = len(self.output)
        if "expect" in step:
            pat = re.compile(step["expect"].encode("utf-8"), re.S)
            need = int(step.get("count", 1))
            while True:
                found = list(pat.finditer(self.output, self.search_from))
                if len(found) >= need:
                    m = found[need - 1]
                    ev["matched"] = [m.start(), m.end()]
                    self.search_from = m.end()
                    break
                if self.eof:
                    raise RecordingError("step %d: program exited while waiting for %r"
                                         % (idx, step["expect"]))
                left = deadline - time.monotonic()
                if left <= 0:
                    ok = False
                    break
                self.pump(left)
        if ok and "quiet_ms" in step:
            q = step["quiet_ms"] / 1000.0
            since = time.monotonic()
            while True:
                if self.eof:
                    break
                ref = max(self.last_output_t, since)
                idle = time.monotonic() - ref
                if idle >= q:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    ok = False
                    break
                self.pump(min(q - idle, left))
            ev["quiet_reached_at"] = len(self.output)
        if ok and step.get("exit"):
            while not self.eof:
                left = deadline - time.monotonic()
                if left <= 0:
                    ok = False
                    break
                self.pump(left)
        if not ok:
            what = "step %d (%s) timed out after %.1fs" % (
                idx, step.get("note") or step.get("expect") or step, time.monotonic() - t_start)
            if step.get("optional"):
                ev["timed_out"] = True
            else:
                raise RecordingError(what)
        ev["waited_s"] = round(time.monotonic() - t_start, 4)
        if "send" in step and step["send"] != "":
            if self.eof:
                raise RecordingError("step %d: program exited before input could be sent"
                                     % idx)
            data = step["send"].encode("utf-8")
            ev["input_offset"] = len(self.input)
            ev["output_offset"] = len(self.output)
            ev["sent"] = esc_bytes(data)
            self.write_input(data)
            self.search_from = max(self.search_from, len(self.output))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="fixture directory to write")
    ap.add_argument("--name", help="fixture name (default: basename of --out)")
    ap.add_argument("--rows", type=int, default=24)
    ap.add_argument("--cols", type=int, default=80)
    ap.add_argument("--term", default="xterm-256color")
    ap.add_argument("--cwd", default=os.getcwd())
    ap.add_argument("--env", action="append", default=[],
                    help="KEY=VALUE added to the clean env ({HOME} is replaced by "
                         "the private home directory)")
    ap.add_argument("--steps", help="JSON file with the step list ('-' = stdin)")
    ap.add_argument("--timeout", type=float, default=60, help="global deadline, seconds")
    ap.add_argument("--program", help="program name for meta.json")
    ap.add_argument("--version-cmd", help="shell command printing the program version")
    ap.add_argument("--description", default="", help="'what happens' paragraph")
    ap.add_argument("--meta-json", default="{}", help="extra JSON object merged into meta")
    ap.add_argument("--max-bytes", type=int, default=300 * 1024,
                    help="fail if output.bin grows beyond this")
    ap.add_argument("argv", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    if a.argv and a.argv[0] == "--":
        a.argv = a.argv[1:]
    if not a.argv:
        ap.error("no command given (put it after --)")
    a.cwd = os.path.abspath(a.cwd)
    steps = []
    if a.steps:
        steps = json.load(sys.stdin if a.steps == "-" else open(a.steps))
    for i, s in enumerate(steps):
        if s.get("exit") and i != len(steps) - 1:
            ap.error("an exit step must be last")
    name = a.name or os.path.basename(os.path.normpath(a.out))
    version = None
    if a.version_cmd:
        try:
            # same PATH as the recorded program, so the same binary answers
            venv = {"PATH": CLEAN_PATH, "LANG": "C.UTF-8", "TERM": a.term,
                    "HOME": tempfile.gettempdir()}
            version = subprocess.run(a.version_cmd, shell=True, capture_output=True,
                                     text=True, timeout=20, env=venv,
                                     cwd=a.cwd).stdout.strip()
        except Exception as e:  # noqa
            version = "unknown (%s)" % e

    rec = Recorder(a, steps)
    error = None
    status = None
    try:
        status = rec.run()
    except RecordingError as e:
        error = str(e)
    except KeyboardInterrupt:
        error = "interrupted"
    if error is None and len(rec.output) > a.max_bytes:
        error = "output.bin is %d bytes, more than --max-bytes %d" % (len(rec.output),
                                                                      a.max_bytes)
    env_doc = dict(rec.env)
    env_doc["HOME"] = "<fresh temporary directory>"
    env_doc = {k: v.replace(rec.home, "<HOME>") for k, v in env_doc.items()}
    replies = [e for e in rec.events if e["type"] == "reply"]
    meta = {
        "name": name,
        "program": a.program or os.path.basename(a.argv[0]),
        "version": version,
        "command": shlex.join(a.argv),
        "argv": a.argv,
        "cwd": a.cwd,
        "rows": a.rows,
        "cols": a.cols,
        "TERM": a.term,
        "env": env_doc,
        "date_recorded": datetime.datetime.now(datetime.timezone.utc)
                         .replace(microsecond=0).isoformat(),
        "description": a.description,
        "steps": steps,
        "exit_status": status,
        "duration_s": rec.now(),
        "output_bytes": len(rec.output),
        "input_bytes": len(rec.input),
        "replies_sent": [{"query_name": e["query_name"], "query": e["query"],
                          "reply": e["reply"], "output_offset": e["output_offset"],
                          "input_offset": e["input_offset"]} for e in replies],
        "recorder": {"script": "scripts/record-fixture.py", "version": RECORDER_VERSION,
                     "host": {"uname": " ".join(os.uname()[i] for i in (0, 2, 4))}},
        "files": {
            "output.bin": "every byte the program wrote to the PTY master, in order",
            "input.bin": "every byte written to the PTY input: terminal replies and "
                         "scripted keystrokes, in order",
            "events.json": "timeline of steps and replies with output/input offsets "
                           "(bytes shown escaped: \\e = ESC, \\xNN, \\\\ = backslash)",
        },
    }
    meta.update(json.loads(a.meta_json))
    if error:
        meta["error"] = error

    out = os.path.abspath(a.out)
    target = out + ".failed" if error else out + ".partial"
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(target)
    with open(os.path.join(target, "output.bin"), "wb") as f:
        f.write(rec.output)
    with open(os.path.join(target, "input.bin"), "wb") as f:
        f.write(rec.input)
    with open(os.path.join(target, "events.json"), "w") as f:
        json.dump(rec.events, f, indent=1, ensure_ascii=False)
        f.write("\n")
    with open(os.path.join(target, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2, ensure_ascii=False)
        f.write("\n")
    if error:
        tail = esc_bytes(bytes(rec.output[-600:]))
        sys.stderr.write("record-fixture: FAILED %s: %s\n  partial recording kept in %s\n"
                         "  last output: %s\n" % (name, error, target, tail))
        sys.exit(1)
    shutil.rmtree(out, ignore_errors=True)
    os.rename(target, out)
    sys.stderr.write("record-fixture: %s ok: %d bytes out, %d bytes in, %d replies, "
                     "exit %s, %.1fs\n" % (name, len(rec.output), len(rec.input),
                                           len(replies), status, rec.now()))


if __name__ == "__main__":
    main()
