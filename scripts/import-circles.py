#!/usr/bin/env python3
"""The import graph of a crate's files, and its circles.

Usage: scripts/import-circles.py [CRATE_SRC]   (default crates/tether-shell/src)

Each file of the crate is a node (lib.rs aside: it only declares the modules
and re-exports). An edge A -> B means A names something of B's: a `use` or a
path in code through `crate::`, `super::`, `self::`, or a child module of A's
(`mod.rs` naming `local::Local`). A name lib.rs re-exports (`crate::Live`)
counts as the file that defines it. Test code (`#[cfg(test)] mod tests`) is
left out: it may look anywhere.

Prints every strongly connected component of more than one file, largest
first, and the longest simple circle; exits 1 when a circle has more than
two files (`--max N` to change the bound).
"""

import os
import re
import sys
from collections import defaultdict

args = [a for a in sys.argv[1:] if not a.startswith("--")]
MAX = 2
if "--max" in sys.argv:
    MAX = int(sys.argv[sys.argv.index("--max") + 1])
    args = [a for a in args if a != str(MAX)]
SRC = args[0] if args else "crates/tether-shell/src"


def modpath(rel):
    """`session/call.rs` -> ('session', 'call'); `pump/mod.rs` -> ('pump',)."""
    parts = rel[:-3].split("/")
    if parts[-1] == "mod":
        parts = parts[:-1]
    if parts == ["lib"]:
        return ()
    return tuple(parts)


files = {}
for root, _, names in os.walk(SRC):
    for n in names:
        if n.endswith(".rs"):
            rel = os.path.relpath(os.path.join(root, n), SRC)
            files[modpath(rel)] = rel
modules = set(files)


def strip(text):
    """Without comments, strings and the test module."""
    text = re.sub(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{.*", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'r#*"(?:.|\n)*?"#*', '""', text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    return text


def expand(text, start):
    """The paths of a path tree starting at `start` (`a::{b, c::d}`)."""
    out, i = [], start

    def tree(i, prefix):
        m = re.compile(r"\s*(\w+)").match(text, i)
        if text.startswith("{", i) or re.compile(r"\s*\{").match(text, i):
            i = text.index("{", i) + 1
            while True:
                i = tree(i, prefix)
                m2 = re.compile(r"\s*([,}])").match(text, i)
                if not m2:
                    return i
                i = m2.end()
                if m2.group(1) == "}":
                    return i
                if re.compile(r"\s*\}").match(text, i):
                    return re.compile(r"\s*\}").match(text, i).end()
        if not m:
            out.append(prefix)
            return i
        name, i = m.group(1), m.end()
        if text.startswith("::", i):
            return tree(i + 2, prefix + [name])
        out.append(prefix + [name])
        return i

    tree(start, [])
    return out


def resolve(path):
    """The deepest module a path names (its file), or None."""
    path = tuple(path)
    for k in range(len(path), 0, -1):
        if path[:k] in modules:
            return path[:k]
    return None


lib = strip(open(os.path.join(SRC, "lib.rs")).read())
reexport = {}
for m in re.finditer(r"pub use (\w+)::", lib):
    for p in expand(lib, m.end() - len(m.group(1)) - 2):
        if p:
            reexport[p[-1]] = resolve([m.group(1)] + p)

edges = defaultdict(set)
for mod, rel in files.items():
    if mod == ():
        continue
    text = strip(open(os.path.join(SRC, rel)).read())
    is_dir = rel.endswith("mod.rs")
    here = mod if is_dir else mod  # a file's own children live under its path
    parent = mod[:-1]
    children = {m[-1] for m in modules if len(m) == len(mod) + 1 and m[: len(mod)] == mod}
    for m in re.finditer(r"\b(crate|super|self)::", text):
        base = {"crate": [], "super": list(parent), "self": list(here)}[m.group(1)]
        for p in expand(text, m.end()):
            full = base + p
            t = resolve(full)
            if t is None and full and full[0] in reexport and len(base) == 0:
                t = reexport[full[0]]
            if t is None and base == [] and p and p[0] in reexport:
                t = reexport[p[0]]
            if t and t != mod and t != ():
                edges[mod].add(t)
    for c in children:
        if re.search(r"\b(?<!::)" + c + r"::", text):
            edges[mod].add(mod + (c,))


def sccs(nodes):
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def longest_cycle(comp):
    comp = set(comp)
    best = []

    def dfs(start, v, path, seen):
        nonlocal best
        for w in edges[v]:
            if w == start and len(path) > len(best):
                best = list(path)
            elif w in comp and w not in seen and w > start:
                seen.add(w)
                path.append(w)
                dfs(start, w, path, seen)
                path.pop()
                seen.discard(w)

    for s in sorted(comp):
        dfs(s, s, [s], {s})
    return best


name = lambda m: files[m]
comps = sorted((c for c in sccs([m for m in files if m != ()]) if len(c) > 1), key=len, reverse=True)
longest = []
for c in comps:
    cyc = longest_cycle(c)
    if len(cyc) > len(longest):
        longest = cyc
print(f"{len(files) - 1} files, {sum(len(e) for e in edges.values())} edges")
if not comps:
    print("no circle")
for c in comps:
    print(f"component of {len(c)}: {' '.join(sorted(name(m) for m in c))}")
if longest:
    print(f"longest circle ({len(longest)} files): {' -> '.join(name(m) for m in longest + longest[:1])}")
sys.exit(1 if len(longest) > MAX else 0)
