#!/usr/bin/env python3
"""What a groups.conf upcall source adds to `tether hosts` (issue 28).

Usage: python3 scripts/bench-groups.py TETHER [RUNS]

Writes a ClusterShell directory in a temporary place with a file source
(sed on a 5,000-line `group: nodes` file, as ClusterShell's `local`) and,
when `nodeattr` is installed, a genders source on a 2,000-node genders
file; then times, interleaved, RUNS times each (median):

- the upcall alone (`/bin/sh -c COMMAND`, as tether runs it),
- `tether hosts n[1-3]` (tether with no group: the floor),
- `tether hosts @SOURCE:GROUP`,
- `nodeset -s SOURCE -f @GROUP` (ClusterShell, for reference).

"added" is the group's run less the floor; the ratio is added / upcall.
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time


def timed(argv, env):
    t = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


def main():
    tether = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    d = tempfile.mkdtemp(prefix="bench-groups-")
    with open(os.path.join(d, "nodes.txt"), "w") as f:
        for i in range(5000):
            f.write(f"g{i}: n[{i * 10}-{i * 10 + 9}]\n")
    with open(os.path.join(d, "genders"), "w") as f:
        for i in range(2000):
            f.write(f"c{i} compute,rack={i // 40}\n")
    files_map = "sed -n 's/^$GROUP:\\(.*\\)/\\1/p' $CFGDIR/nodes.txt"
    genders_map = "nodeattr -f $CFGDIR/genders -n $GROUP"
    with open(os.path.join(d, "groups.conf"), "w") as f:
        f.write("[Main]\ndefault: files\nconfdir:\nautodir:\n")
        f.write(f"[files]\nmap: {files_map}\n")
        f.write(f"[genders]\nmap: {genders_map}\n")
    env = dict(os.environ, CLUSTERSHELL_CFGDIR=d, XDG_CONFIG_HOME=os.path.join(d, "xdg"))
    cases = [("files", "g4321", files_map.replace("$GROUP", "g4321"))]
    if subprocess.run(["sh", "-c", "command -v nodeattr"], stdout=subprocess.DEVNULL).returncode == 0:
        cases.append(("genders", "compute", genders_map.replace("$GROUP", "compute")))
    have_nodeset = subprocess.run(["sh", "-c", "command -v nodeset"], stdout=subprocess.DEVNULL).returncode == 0
    print("| source | upcall alone | tether, no group | tether @source:group | added | added / upcall | nodeset -s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for source, group, command in cases:
        command = command.replace("$CFGDIR", d)
        kinds = {
            "upcall": ["/bin/sh", "-c", command],
            "floor": [tether, "hosts", "n[1-3]"],
            "group": [tether, "hosts", f"@{source}:{group}"],
        }
        if have_nodeset:
            kinds["nodeset"] = ["nodeset", "-s", source, "-f", f"@{group}"]
        times = {k: [] for k in kinds}
        for _ in range(runs):
            for k, argv in kinds.items():
                times[k].append(timed(argv, env))
        med = {k: statistics.median(v) * 1000 for k, v in times.items()}
        added = med["group"] - med["floor"]
        ns = f"{med['nodeset']:.1f} ms" if have_nodeset else "-"
        print(
            f"| {source} | {med['upcall']:.1f} ms | {med['floor']:.1f} ms | {med['group']:.1f} ms "
            f"| {added:.1f} ms | {added / med['upcall']:.2f}× | {ns} |"
        )


if __name__ == "__main__":
    main()
