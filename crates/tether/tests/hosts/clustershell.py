"""Reads node-set expressions, one per line, and prints what ClusterShell's
NodeSet (the library behind `nodeset`) makes of each, as one JSON line:
{"e": [names], "f": folded, "c": count} or {"error": message}."""
import json
import sys

from ClusterShell.NodeSet import NodeSet

for line in sys.stdin:
    expr = line.rstrip("\n")
    try:
        ns = NodeSet(expr)
        print(json.dumps({"e": list(ns), "f": str(ns), "c": len(ns)}))
    except Exception as e:  # every parse error of ClusterShell
        print(json.dumps({"error": str(e)}))
    sys.stdout.flush()
