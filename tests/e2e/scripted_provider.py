"""An OpenAI-compatible provider on loopback whose model follows a script, for the tool tests:
a real HTTP server speaking the chat completions API with streaming and tool calls, standing
in for a hosted model that decides to call tools (the default local model is too small to be
relied on for that).

The script is in the user's words:
  CALL <tool> <JSON arguments>     (one or more lines) the model calls those tools;
  anything else                    the model answers "Hello from the script."
After tool results, the model answers "Tool said: " and the results (the first 300 characters
of each), and so a test sees what reached the model.

    server = ScriptedProvider(); server.base_url  # http://127.0.0.1:PORT/v1
    server.requests                              # every chat request's JSON body, in order
    server.stop()
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "scripted-tools"


def _chunk(delta: dict, finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def _content_text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def answer(messages: list[dict]) -> tuple[str, list[tuple[str, str]]]:
    """What the scripted model writes for `messages`: text, and calls as (name, arguments)."""
    results = []
    for message in reversed(messages):
        if message.get("role") != "tool":
            break
        results.append(_content_text(message))
    if results:
        said = " | ".join(r[:300] for r in reversed(results))
        return f"Tool said: {said}", []
    last_user = next((m for m in reversed(messages) if m.get("role") == "user"), {})
    lines = [line.strip() for line in _content_text(last_user).splitlines() if line.strip().startswith("CALL ")]
    calls = []
    for line in lines:
        _, name, *rest = line.split(" ", 2)
        calls.append((name, rest[0] if rest else "{}"))
    if calls:
        return "Let me use a tool.", calls
    return "Hello from the script.", []


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _json(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path.rstrip("/") == "/v1/models":
            self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "script"}]})
        else:
            self._json(404, {"error": {"message": "not found"}})

    def do_POST(self):
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._json(404, {"error": {"message": "not found"}})
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        self.server.requests.append(body)
        text, calls = answer(body.get("messages", []))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            self.wfile.write(_chunk({"role": "assistant", "content": ""}))
            for word in text.split(" "):
                self.wfile.write(_chunk({"content": word + " "}))
                self.wfile.flush()
                time.sleep(0.01)
            for index, (name, arguments) in enumerate(calls):
                # The call's id and name first, then its arguments in pieces, as OpenAI streams them.
                head = {"index": index, "id": f"call_script_{index}", "type": "function", "function": {"name": name, "arguments": ""}}
                self.wfile.write(_chunk({"tool_calls": [head]}))
                for start in range(0, len(arguments), 7):
                    piece = {"index": index, "function": {"arguments": arguments[start:start + 7]}}
                    self.wfile.write(_chunk({"tool_calls": [piece]}))
            self.wfile.write(_chunk({}, "tool_calls" if calls else "stop"))
            usage = {"prompt_tokens": 10, "completion_tokens": len(text.split()), "total_tokens": 10 + len(text.split())}
            self.wfile.write(b"data: " + json.dumps({"choices": [], "usage": usage}).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True


class ScriptedProvider:
    def __init__(self):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.server.requests = []
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.model = MODEL

    @property
    def requests(self) -> list[dict]:
        return self.server.requests

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


if __name__ == "__main__":
    # By hand: python3 tests/e2e/scripted_provider.py, then point a provider at the URL printed.
    provider = ScriptedProvider()
    print(provider.base_url, flush=True)
    threading.Event().wait()
