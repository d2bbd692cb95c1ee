"""Drives `tether mcp` with the official MCP Python SDK (the `mcp` package
from PyPI, a client no one here wrote): initialize, tools/list with schema
checks, and calls that produce every status and every kind of bad input.

Usage: python client.py /path/to/tether
Exits non-zero (with the failing check) when something is wrong.
"""

import asyncio
import json
import os
import time
import subprocess
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TETHER = sys.argv[1]
TOOLS = {
    "shell_run", "shell_send", "shell_read", "shell_signal",
    "shell_screen", "shell_reset", "shell_close", "shell_list", "exec_hosts",
}
RESULT_FIELDS = {
    "session", "host", "status", "exit_code", "pipe_status", "signal", "output",
    "truncated", "cwd", "foreground", "duration_ms", "shell_restarted", "link",
    "terminal_holders", "agentless", "confinement", "nested", "nest_change", "secret",
}
# JSON Schema's own formats: anything else (uint64, int32, double …) makes
# other clients' validators warn.
STANDARD_FORMATS = {
    "date-time", "date", "time", "duration", "email", "idn-email", "hostname",
    "idn-hostname", "ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference",
    "uuid", "uri-template", "json-pointer", "relative-json-pointer", "regex",
}


def formats(schema):
    """Every `format` value in a schema, at any depth."""
    if isinstance(schema, dict):
        found = [schema["format"]] if isinstance(schema.get("format"), str) else []
        return found + [f for v in schema.values() for f in formats(v)]
    if isinstance(schema, list):
        return [f for v in schema for f in formats(v)]
    return []


def check(cond, what):
    if not cond:
        raise AssertionError(what)


async def call(s, name, **args):
    r = await s.call_tool(name, args)
    return r


def structured(r):
    check(not r.is_error, f"unexpected tool error: {r.content}")
    sc = r.structured_content
    check(set(sc) == RESULT_FIELDS, f"result fields {sorted(sc)}")
    text = r.content[0].text
    check(text.rstrip().endswith("]"), f"status line in {text!r}")
    return sc


async def main():
    params = StdioServerParameters(command=TETHER, args=["mcp", "--norc"], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            init = await s.initialize()
            check(init.server_info.name == "tether", f"server name {init.server_info.name}")
            check(init.server_info.version, "server version")

            tools = {t.name: t for t in (await s.list_tools()).tools}
            check(set(tools) == TOOLS, f"tools {sorted(tools)}")
            run = tools["shell_run"]
            props = run.input_schema["properties"]
            for p in ["command", "session", "host", "timeout_s", "on_timeout", "output_limit", "workdir"]:
                check(p in props, f"shell_run parameter {p}")
                check(props[p].get("description"), f"shell_run.{p} is documented")
            check(run.input_schema.get("required") == ["command"], f"required {run.input_schema.get('required')}")
            check("PAGER=cat" in run.description, "the description lists the defaults")
            for name in ["shell_run", "shell_send", "shell_read", "shell_signal"]:
                out = tools[name].output_schema
                check(out and set(out["properties"]) == RESULT_FIELDS, f"{name} output schema")
            check(set(tools["shell_send"].input_schema["properties"]) == {"session", "input", "keys", "wait_s"}, "shell_send params")
            for t in tools.values():
                for schema in [t.input_schema, t.output_schema]:
                    odd = set(formats(schema)) - STANDARD_FORMATS
                    check(not odd, f"{t.name}: non-standard formats {odd}")
            duration = tools["shell_run"].output_schema["properties"]["duration_ms"]
            check(duration.get("minimum") == 0, f"duration_ms keeps its minimum: {duration}")
            for key in ["C-l", "C-u", "C-\\"]:
                check(key in tools["shell_send"].description, f"shell_send lists {key}")

            # exited, exact codes, persistent state
            r = structured(await call(s, "shell_run", command="echo hello; (exit 3)"))
            check((r["status"], r["exit_code"], r["output"]) == ("exited", 3, "hello\n"), f"exited {r}")
            check(r["host"] is None and r["truncated"] is None, f"local, unclipped {r}")
            r = structured(await call(s, "shell_run", command="true | false | (exit 3)"))
            check((r["exit_code"], r["pipe_status"]) == (3, [0, 1, 3]), f"pipe_status {r}")
            structured(await call(s, "shell_run", command="cd /tmp", session="w"))
            r = structured(await call(s, "shell_run", command="pwd", session="w"))
            check((r["output"], r["cwd"]) == ("/tmp\n", "/tmp"), f"state persists {r}")
            r = structured(await call(s, "shell_run", command="pwd", workdir="/usr"))
            check(r["output"] == "/usr\n", f"workdir {r}")

            # waiting_for_input, then send and keys
            r = structured(await call(s, "shell_run", command="cat", timeout_s=10))
            check(r["status"] == "waiting_for_input" and r["foreground"]["command"] == "cat", f"waiting {r}")
            r = structured(await call(s, "shell_send", input="typed\n", wait_s=5))
            check((r["status"], r["output"]) == ("waiting_for_input", "typed\n"), f"send {r}")
            r = structured(await call(s, "shell_send", keys=["C-d"], wait_s=5))
            check((r["status"], r["exit_code"]) == ("exited", 0), f"C-d {r}")

            # running (kept), busy, read
            r = structured(await call(s, "shell_run", command="echo first; sleep 1; echo second", timeout_s=0.2, on_timeout="keep"))
            check((r["status"], r["output"]) == ("running", "first\n"), f"kept {r}")
            busy = await call(s, "shell_run", command="echo no")
            check(busy.is_error and "still running" in busy.content[0].text, f"busy {busy.content}")
            r = structured(await call(s, "shell_read", wait_s=10))
            check((r["status"], r["exit_code"], r["output"]) == ("exited", 0, "second\n"), f"read {r}")

            # timed_out, interrupted, shell kept
            r = structured(await call(s, "shell_run", command="echo partial; sleep 30", timeout_s=0.3))
            check(r["status"] == "timed_out" and r["output"].startswith("partial\n"), f"timed out {r}")
            check(not r["shell_restarted"], f"recovered {r}")

            # signal the foreground
            r = structured(await call(s, "shell_run", command="sleep 30", timeout_s=0.2, on_timeout="keep", session="sig"))
            check(r["status"] == "running", f"sleep kept {r}")
            r = structured(await call(s, "shell_signal", session="sig", signal="INT"))
            check(r["status"] == "exited" and r["exit_code"] == 130 and r["signal"] == "SIGINT", f"signalled {r}")

            # shell_exited, then a fresh shell that says so
            r = structured(await call(s, "shell_run", command="exit 7", session="x"))
            check((r["status"], r["exit_code"]) == ("shell_exited", 7), f"shell exited {r}")
            r = structured(await call(s, "shell_run", command="echo back", session="x"))
            check(r["output"] == "back\n" and r["shell_restarted"], f"restarted {r}")

            # incomplete_input
            r = structured(await call(s, "shell_run", command="echo 'open"))
            check((r["status"], r["output"]) == ("incomplete_input", ""), f"incomplete {r}")

            # clipping
            r = structured(await call(s, "shell_run", command="seq 1 5000", output_limit=100))
            t = r["truncated"]
            check(t and t["total_chars"] == sum(len(str(n)) + 1 for n in range(1, 5001)), f"truncated {t}")
            with open(t["full_output_path"]) as f:
                check(f.read().endswith("4999\n5000\n"), "the spill file holds everything")

            # screen, list, reset, close
            r = await call(s, "shell_screen", session="w")
            check(not r.is_error and "screen" in r.structured_content, f"screen {r}")
            r = await call(s, "shell_list")
            names = [x["name"] for x in r.structured_content["sessions"]]
            check(names == sorted(["main", "w", "sig", "x"]), f"list {names}")
            r = await call(s, "shell_reset", session="w")
            check(not r.is_error and r.structured_content["cwd"] == "/tmp", f"reset {r.structured_content}")
            r = structured(await call(s, "shell_run", command="pwd", session="w"))
            check(r["output"] == "/tmp\n", f"cwd after reset {r}")
            r = await call(s, "shell_close", session="w")
            check(not r.is_error, f"close {r}")

            # bad input: tool errors that say what to do, never a crash
            for name, args, needle in [
                ("shell_run", {"command": "true", "timeout_s": 99999}, "timeout_s must be more than 0 and at most 3600 seconds"),
                ("shell_run", {"command": "true", "host": "web01:99999"}, "the port must be a number"),
                ("shell_send", {"session": "main", "keys": ["F13"]}, "unknown key"),
                ("shell_read", {"session": "nope"}, "no session named"),
                ("shell_signal", {"session": "main", "signal": "USR9"}, "unknown signal"),
                ("shell_close", {"session": "w"}, "no session named"),
            ]:
                r = await call(s, name, **args)
                check(r.is_error and needle in r.content[0].text, f"{name} {args}: {r.content}")
            r = structured(await call(s, "shell_run", command="echo still serving"))
            check(r["output"] == "still serving\n", "the server kept serving")
    # The server's sessions lived in the daemon, in its own namespace, and
    # end with the server.
    deadline = time.monotonic() + 10
    while True:
        listed = json.loads(subprocess.run([TETHER, "ls", "--json"], capture_output=True, text=True, check=True).stdout)
        left = [x["address"] for x in listed["sessions"] if (x["namespace"] or "").startswith("mcp-")]
        if not left:
            break
        check(time.monotonic() < deadline, f"sessions outlived the MCP server: {left}")
        time.sleep(0.02)
    print("mcp client: all checks passed")


def malformed_json_rpc():
    """A malformed message gets a JSON-RPC error and the server keeps serving."""
    p = subprocess.Popen([TETHER, "mcp", "--norc"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    def send(obj):
        p.stdin.write((obj if isinstance(obj, str) else json.dumps(obj)) + "\n")
        p.stdin.flush()
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    init = json.loads(p.stdout.readline())
    check(init.get("result", {}).get("serverInfo", {}).get("name") == "tether", f"raw init {init}")
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send("{this is not json")
    send({"hello": "not json-rpc", "id": 7})
    send({"jsonrpc": "2.0", "id": 3, "method": "no/such/method"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    # The SDK answers requests concurrently: replies may come in any order.
    errors, listed = {}, False
    for _ in range(10):
        msg = json.loads(p.stdout.readline())
        if "error" in msg:
            errors[msg.get("id")] = msg["error"]["code"]
        elif msg.get("id") == 2:
            check("tools" in msg["result"], f"tools/list after garbage {msg}")
            listed = True
        if listed and len(errors) == 3:
            break
    check(listed, "tools/list was answered after the garbage")
    check(errors.get(None) == -32700, f"parse error for the malformed line: {errors}")
    check(errors.get(7) == -32600, f"invalid request for the non-JSON-RPC object: {errors}")
    check(errors.get(3) == -32601, f"method not found: {errors}")
    p.stdin.close()
    p.wait(timeout=10)
    print("mcp raw: malformed input answered with an error, serving went on")


asyncio.run(main())
malformed_json_rpc()
