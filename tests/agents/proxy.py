"""A recording proxy on loopback: forwards every request to `confab serve` as it came, streams the
answer back as it comes, and writes each exchange (method, path, headers, the request's JSON, the
status and the answer's body) to a JSON-lines file. A 4xx is flagged in the record and counted.

It may answer chosen requests with scripted replies (`script`): the random test model never
calls a tool, so a test that needs a tool round trip has the proxy give the tool call it wants,
in the API's streamed shape (scripted.py). Such a request is still served by `confab serve` (so
it is checked like any other, and its prompt is in the prefix cache as a real turn's would be);
its answer is kept in the record as `served`, the script sent instead and recorded as
`response`, with `"scripted": true`. Every other request, the one carrying the last tool's
result included, is answered by `confab serve`.

Run by hand: python3 tests/agents/proxy.py UPSTREAM_PORT RECORD.jsonl [CAP]  (prints its own port)
"""
from __future__ import annotations

import http.client
import http.server
import json
import sys
import threading
from typing import Callable

# Given a request's path and JSON body, the scripted answer (server-sent events), or None to
# pass on confab serve's. Called for each request in turn, so it may answer several.
Script = Callable[[str, dict], "bytes | None"]


class Recorder:
    def __init__(self, upstream_port: int, record_path: str, cap: int | None = None, script: Script | None = None):
        self.upstream_port = upstream_port
        self.script = script
        # The random tiny models never end a reply themselves: a cap on its length (the client's
        # own limit when lower) is the one change made to what the clients send.
        self.cap = cap
        self.record_path = record_path
        self.lock = threading.Lock()
        self.exchanges: list[dict] = []

    def add(self, exchange: dict):
        with self.lock:
            self.exchanges.append(exchange)
            with open(self.record_path, "a") as f:
                f.write(json.dumps(exchange) + "\n")

    def scripted_answer(self, path: str, payload) -> bytes | None:
        """The script's answer to this request, if it has one."""
        with self.lock:
            if self.script is None or not isinstance(payload, dict):
                return None
            return self.script(path, payload)

    def refused(self) -> list[dict]:
        with self.lock:
            return [e for e in self.exchanges if 400 <= e["status"] < 500]


def handler_for(recorder: Recorder):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def forward(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            sent = body
            try:
                payload = json.loads(body) if body else None
            except ValueError:
                payload = None
            scripted = recorder.scripted_answer(self.path, payload)
            if recorder.cap and body:
                if isinstance(payload, dict) and ("max_tokens" in payload or "input" in payload):
                    key = "max_tokens" if "messages" in payload else "max_output_tokens"
                    payload[key] = min(payload.get(key) or recorder.cap, recorder.cap)
                    sent = json.dumps(payload).encode()
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection", "accept-encoding", "content-length")}
            headers["Content-Length"] = str(len(sent))
            upstream = http.client.HTTPConnection("127.0.0.1", recorder.upstream_port, timeout=900)
            upstream.request(self.command, self.path, body=sent, headers=headers)
            answer = upstream.getresponse()
            record = {
                "method": self.command,
                "path": self.path,
                "headers": {k: v for k, v in self.headers.items() if k.lower() not in ("authorization", "x-api-key")},
                # As the client sent it (the cap changed `payload`).
                "request": json.loads(body) if payload is not None else (body.decode("utf-8", "replace") or None),
                "status": answer.status,
                "refused": 400 <= answer.status < 500,
                "scripted": scripted is not None,
            }
            if scripted is not None:
                # Served all the same, so that it is checked and its prompt is in the prefix
                # cache as a real turn's would be; the client gets the script instead.
                record["served"] = answer.read().decode("utf-8", "replace")
                record["response"] = scripted.decode()
                self.send_scripted(scripted)
            else:
                record["response"] = self.relay(answer).decode("utf-8", "replace")
            upstream.close()
            recorder.add(record)

        def relay(self, answer: http.client.HTTPResponse) -> bytes:
            """The upstream answer, streamed on as it comes; returns its body."""
            self.send_response(answer.status)
            for key, value in answer.getheaders():
                if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(key, value)
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Connection", "close")
            self.end_headers()
            received = bytearray()
            while True:
                chunk = answer.read1(65536)
                if not chunk:
                    break
                received.extend(chunk)
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            self.close_connection = True
            return bytes(received)

        def send_scripted(self, answer: bytes):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(answer)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(answer)
            self.wfile.flush()
            self.close_connection = True

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = forward

    return Handler


class Proxy:
    """The proxy in a thread of this process; `port` is where clients point."""

    def __init__(self, upstream_port: int, record_path: str, cap: int | None = None, script: Script | None = None):
        self.recorder = Recorder(upstream_port, record_path, cap, script)
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler_for(self.recorder))
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


if __name__ == "__main__":
    proxy = Proxy(int(sys.argv[1]), sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else None)
    print(proxy.port, flush=True)
    try:
        proxy.thread.join()
    except KeyboardInterrupt:
        proxy.stop()
