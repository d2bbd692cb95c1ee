#!/usr/bin/env python3
"""Session start with start-up files as people have them (issue 37).

For each setup (a HOME of its own holding its rc file), side by side in one
run, alternating: the shell's own interactive start (`bash -i -c true`,
`zsh -i -c true`, which shows no prompt, so runs no prompt hook), the same
with one prompt (`true` and `exit` read as typed: the hooks run twice, as
in a terminal), and the first result of a new tether session in a running
daemon (`tether run -s NEW --shell SHELL -- true`, then closed). Prints the
medians, tether's difference from `-i -c true` and its ratio.

Usage: scripts/bench-startup.py /path/to/tether [ROUNDS]
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TETHER = sys.argv[1]
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 15

PYENV = os.path.expanduser("~/.pyenv")
SETUPS = [
    ("bash, no rc file", "bash", ".bashrc", ""),
    ("bash, pyenv-virtualenv", "bash", ".bashrc",
     f'export PYENV_ROOT={PYENV}\nexport PATH="$PYENV_ROOT/bin:$PYENV_ROOT/shims:$PATH"\n'
     'eval "$(pyenv init -)"\neval "$(pyenv virtualenv-init -)"\n'),
    ("bash, direnv", "bash", ".bashrc", 'eval "$(direnv hook bash)"\n'),
    ("bash, powerline + fzf (vi mode)", "bash", ".bashrc",
     "set -o vi\nsource /usr/share/doc/fzf/examples/key-bindings.bash\n"
     "source /usr/share/powerline/bindings/bash/powerline.sh\n"),
    ("zsh, compinit + autosuggestions + syntax-highlighting + powerlevel9k", "zsh", ".zshrc",
     "autoload -Uz compinit && compinit -u\n"
     "source /usr/share/zsh-autosuggestions/zsh-autosuggestions.zsh\n"
     "source /usr/share/powerlevel9k/powerlevel9k.zsh-theme\n"
     "source /usr/share/zsh-syntax-highlighting/zsh-syntax-highlighting.zsh\n"),
]


def timed(cmd, env, stdin=None):
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, input=stdin, stdin=None if stdin else subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t0


def main():
    print(f"{'setup':<72} {'shell -i':>9} {'+prompt':>9} {'tether':>9} {'diff':>8} {'ratio':>6}")
    for name, shell, rcname, rc in SETUPS:
        if "pyenv" in name and not os.path.isdir(os.path.join(PYENV, "plugins/pyenv-virtualenv")):
            print(f"{name:<72} skipped: no pyenv-virtualenv")
            continue
        home = tempfile.mkdtemp(prefix="tether-bench-home-")
        rundir = tempfile.mkdtemp(prefix="tether-bench-run-")
        os.chmod(rundir, 0o700)
        with open(os.path.join(home, rcname), "w") as f:
            f.write(rc)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYENV")}
        env.update(HOME=home, XDG_RUNTIME_DIR=rundir)
        # The daemon up, and each rc file's first run (compinit's dump) done.
        subprocess.run([TETHER, "run", "-s", "warm", "--shell", shell, "--", "true"], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        own, prompt, ours = [], [], []
        for i in range(ROUNDS):
            own.append(timed([shell, "-i", "-c", "true"], env))
            # Its start with one prompt (the prompt hooks run once), reading
            # `true` and `exit` as typed.
            prompt.append(timed([shell, "-i"], env, stdin=b"true\nexit\n"))
            ours.append(timed([TETHER, "run", "-s", f"b{i}", "--shell", shell, "--", "true"], env))
            subprocess.run([TETHER, "close", "-s", f"b{i}"], env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        subprocess.run([TETHER, "daemon", "stop"], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        a, p, b = statistics.median(own), statistics.median(prompt), statistics.median(ours)
        print(f"{name:<72} {a * 1000:7.1f}ms {p * 1000:7.1f}ms {b * 1000:7.1f}ms "
              f"{(b - a) * 1000:+6.1f}ms {b / a:5.2f}x")
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(rundir, ignore_errors=True)


main()
