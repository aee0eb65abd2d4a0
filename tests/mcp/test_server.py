#!/usr/bin/env python3
"""A small MCP server for Confab's tests, on the standard library only.

It speaks MCP over stdio: JSON-RPC 2.0, one message per line (initialize,
notifications/initialized, ping, tools/list with pagination, tools/call,
notifications/cancelled). Each tools/call runs on its own thread, so a slow
tool does not block the others and can be cancelled.

Tools:
  echo   {text}      -> the text back
  big    {mb}        -> `mb` megabytes (decimal, may be fractional) of text
  slow   {seconds}   -> sleeps, then "slept N s"; a cancel ends it early (logged)
  crash  {}          -> writes a line to stderr and exits with status 3 mid-call
  fail   {}          -> a result with isError: true
  image  {}          -> a 1x1 red PNG and a caption
  pid    {}          -> this process's id (and its helper's, with --grandchild)
  env    {name}      -> the value of an environment variable ("" when unset)
  grow   {}          -> adds the tool `extra` and sends notifications/tools/list_changed
  extra  {}          -> only after `grow`

Options:
  --page-size N      tools per tools/list page (default 4, so the list has pages)
  --exit-at-start N  write a few lines to stderr and exit with status N before reading
  --grandchild       start a helper process (`sleep`) in the same process group
  --stderr-lines N   write N numbered lines to stderr at start (for the tail)

Cancellations are written to stderr as "cancelled request <id>", so a test can
see that the client sent notifications/cancelled.
"""

import argparse
import base64
import json
import os
import subprocess
import sys
import threading
import time

# 1x1 red PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)

TOOLS = [
    ("echo", "Returns the text it is given.", {"text": {"type": "string"}}, ["text"]),
    ("big", "Returns `mb` megabytes of text.", {"mb": {"type": "number"}}, ["mb"]),
    ("slow", "Sleeps for `seconds`, then answers.", {"seconds": {"type": "number"}}, ["seconds"]),
    ("crash", "Exits the server in the middle of the call.", {}, []),
    ("fail", "Answers with an error result (isError).", {}, []),
    ("image", "Returns a tiny PNG image.", {}, []),
    ("pid", "Returns the server's process id.", {}, []),
    ("env", "Returns an environment variable's value.", {"name": {"type": "string"}}, ["name"]),
    ("grow", "Adds the tool `extra` and announces the change.", {}, []),
]
EXTRA = ("extra", "Exists after `grow` was called.", {}, [])

out_lock = threading.Lock()
cancelled = set()
cancelled_lock = threading.Lock()
tools = list(TOOLS)
helper = None


def log(line):
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def send(message):
    data = json.dumps(message, separators=(",", ":")) + "\n"
    with out_lock:
        sys.stdout.write(data)
        sys.stdout.flush()


def reply(request_id, result):
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def reply_error(request_id, code, message):
    send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})


def text(value, is_error=False):
    return {"content": [{"type": "text", "text": value}], "isError": is_error}


def tool_schema(tool):
    name, description, properties, required = tool
    return {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": properties, "required": required},
    }


def list_tools(request_id, params, page_size):
    start = int((params or {}).get("cursor") or 0)
    page = tools[start : start + page_size]
    result = {"tools": [tool_schema(t) for t in page]}
    if start + page_size < len(tools):
        result["nextCursor"] = str(start + page_size)
    reply(request_id, result)


def is_cancelled(request_id):
    with cancelled_lock:
        return request_id in cancelled


def call_tool(request_id, params):
    name = params.get("name")
    args = params.get("arguments") or {}
    if name not in [t[0] for t in tools]:
        reply_error(request_id, -32602, f"Unknown tool: {name}")
        return
    if name == "echo":
        reply(request_id, text(str(args.get("text", ""))))
    elif name == "big":
        size = int(float(args.get("mb", 1)) * 1_000_000)
        line = "0123456789abcdefghijklmnopqrstuvwxyz ... a big result line ...\n"
        body = (line * (size // len(line) + 1))[:size]
        reply(request_id, text(body))
    elif name == "slow":
        seconds = float(args.get("seconds", 1))
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if is_cancelled(request_id):
                return  # A cancelled request gets no answer (MCP spec).
            time.sleep(0.02)
        reply(request_id, text(f"slept {seconds:g} s"))
    elif name == "crash":
        log("crashing on purpose in the middle of a call")
        os._exit(3)
    elif name == "fail":
        reply(request_id, text("the tool failed on purpose", is_error=True))
    elif name == "image":
        reply(
            request_id,
            {
                "content": [
                    {"type": "text", "text": "a red pixel"},
                    {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"},
                ]
            },
        )
    elif name == "pid":
        pids = {"pid": os.getpid(), "helper": helper.pid if helper else None}
        reply(request_id, text(json.dumps(pids)))
    elif name == "env":
        reply(request_id, text(os.environ.get(str(args.get("name", "")), "")))
    elif name == "grow":
        if EXTRA not in tools:
            tools.append(EXTRA)
        reply(request_id, text("added the tool extra"))
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    elif name == "extra":
        reply(request_id, text("extra tool called"))


def handle(message, page_size):
    method = message.get("method")
    request_id = message.get("id")
    params = message.get("params") or {}
    if method is None:
        return  # A response to something we never ask; ignore.
    if request_id is None:  # A notification.
        if method == "notifications/cancelled":
            with cancelled_lock:
                cancelled.add(params.get("requestId"))
            log(f"cancelled request {params.get('requestId')}")
        return
    if method == "initialize":
        # The client's version when we know it, else ours (the client then decides).
        version = params.get("protocolVersion")
        if version not in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"):
            version = "2025-06-18"
        reply(
            request_id,
            {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "confab-test-server", "version": "1.0.0"},
            },
        )
    elif method == "ping":
        reply(request_id, {})
    elif method == "tools/list":
        list_tools(request_id, params, page_size)
    elif method == "tools/call":
        threading.Thread(target=call_tool, args=(request_id, params), daemon=True).start()
    else:
        reply_error(request_id, -32601, f"Method not found: {method}")


def main():
    global helper
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--page-size", type=int, default=4)
    parser.add_argument("--exit-at-start", type=int)
    parser.add_argument("--grandchild", action="store_true")
    parser.add_argument("--stderr-lines", type=int, default=0)
    options = parser.parse_args()

    for i in range(options.stderr_lines):
        log(f"stderr line {i + 1}")
    if options.exit_at_start is not None:
        log("confab-test-server: starting")
        log("confab-test-server: missing API key, giving up")
        sys.exit(options.exit_at_start)
    if options.grandchild:
        helper = subprocess.Popen(["sleep", "300"])

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
            continue
        handle(message, options.page_size)
    log("confab-test-server: stdin closed, exiting")


if __name__ == "__main__":
    main()
