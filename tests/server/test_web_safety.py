"""Web pages cannot drive `confab serve`: raw HTTP as a browser would send it.

Every local port is reachable by every page the user has open, so a request is never trusted for
coming from 127.0.0.1. Checked here with the exact headers a browser sends (http.client, so that
nothing is added or dropped): a foreign `Host` (DNS rebinding), a foreign `Origin` (a cross-site
request), a "simple" `text/plain` request with a JSON body (which a browser sends without a
preflight), CORS preflights, the names and origins the user adds (flags and environment), a key
required beyond loopback, and a refused request's reason in the log at the default level.

Run: .deps/server/venv/bin/python -m unittest tests.server.test_web_safety -v (from the root), or
with the rest of tests/server.
"""
from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import time
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_openai import CONFAB, Server, default_model  # noqa: E402

CHAT = json.dumps({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1, "temperature": 0})
ADDED_ORIGIN = "https://chat.example.com"
ADDED_HOST = "studio.lan"
ENV_ORIGIN = "https://notebook.example.org"


def exchange(port: int, method: str, path: str, headers: dict[str, str], body: str | None = None):
    """Sends exactly `headers` (Host included); returns status, headers (lower-case) and body."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in headers.items():
            connection.putheader(name, value)
        data = body.encode() if body is not None else None
        if data is not None:
            connection.putheader("Content-Length", str(len(data)))
        connection.endheaders(data)
        response = connection.getresponse()
        raw = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, raw.decode(errors="replace")
    finally:
        connection.close()


def model_server(*args: str, env: dict[str, str] | None = None) -> Server:
    model = default_model()
    if not model.is_file():
        raise unittest.SkipTest(f"the default model is not installed at {model}; run scripts/setup.sh")
    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        return Server("--model", str(model), *args)
    finally:
        os.environ.clear()
        os.environ.update(saved)


class PlainServe(unittest.TestCase):
    """`confab serve` as a user starts it for an agent: no key, loopback; plus one added host and
    origin by flag and one origin by the environment."""

    @classmethod
    def setUpClass(cls):
        cls.server = model_server(
            "--allowed-host", ADDED_HOST, "--allowed-origin", ADDED_ORIGIN, env={"CONFAB_ORIGINS": ENV_ORIGIN}
        )
        cls.port = urllib.parse.urlsplit(cls.server.base_url).port
        cls.host = f"127.0.0.1:{cls.port}"
        cls.body = json.dumps({**json.loads(CHAT), "model": cls.server.model})

    @classmethod
    def tearDownClass(cls):
        assert cls.server.stop() == 0

    def send(self, method: str, path: str, headers: dict[str, str], body: str | None = None):
        return exchange(self.port, method, path, headers, body)

    def log(self) -> str:
        return (self.server.home / "stderr.log").read_text()

    def assert_refused(self, status: int, answer, code: str):
        got, headers, body = answer
        self.assertEqual(got, status, body)
        error = json.loads(body)["error"]
        self.assertEqual(error["code"] if "code" in error else error["type"], code, body)
        self.assertNotIn("access-control-allow-origin", headers, "a refused page is told nothing it may read")

    def test_a_foreign_host_is_refused_on_every_endpoint(self):
        for host in (f"evil.example:{self.port}", "evil.example", f"localhost.evil.example:{self.port}", f"10.1.2.3:{self.port}"):
            json_headers = {"Host": host, "Content-Type": "application/json"}
            self.assert_refused(403, self.send("GET", "/v1/models", {"Host": host}), "host_not_allowed")
            self.assert_refused(403, self.send("GET", "/health", {"Host": host}), "host_not_allowed")
            self.assert_refused(403, self.send("POST", "/v1/chat/completions", json_headers, self.body), "host_not_allowed")
            # The Messages API answers in Anthropic's shape.
            status, _, body = self.send("POST", "/v1/messages", json_headers, self.body)
            self.assertEqual((status, json.loads(body)["error"]["type"]), (403, "permission_error"), body)

    def test_the_names_of_this_server_and_the_added_host_are_served(self):
        for host in (self.host, f"localhost:{self.port}", f"[::1]:{self.port}", f"LocalHost:{self.port}", f"{ADDED_HOST}:{self.port}"):
            status, _, body = self.send("GET", "/v1/models", {"Host": host})
            self.assertEqual(status, 200, f"{host}: {body}")
        status, _, body = self.send("POST", "/v1/chat/completions", {"Host": f"{ADDED_HOST}:{self.port}", "Content-Type": "application/json"}, self.body)
        self.assertEqual(status, 200, body)

    def test_a_cross_site_simple_request_runs_nothing_and_writes_nothing(self):
        before = len(self.log().splitlines())
        for path in ("/v1/chat/completions", "/v1/completions", "/v1/responses", "/v1/messages", "/v1/embeddings"):
            body = json.dumps({"model": self.server.model, "input": "Hi", "prompt": "Hi", "store": True, **json.loads(self.body)})
            for headers in (
                {"Host": self.host, "Origin": "http://evil.example", "Content-Type": "text/plain;charset=UTF-8"},
                {"Host": self.host, "Origin": "http://evil.example", "Content-Type": "application/json"},
                {"Host": self.host, "Origin": "null", "Content-Type": "text/plain"},
            ):
                status, answer_headers, answer = self.send("POST", path, headers, body)
                self.assertEqual(status, 403, f"{path} {headers}: {answer}")
                self.assertNotIn("access-control-allow-origin", answer_headers)
        # Nothing reached the engine: no request span's `done` line since.
        self.assertNotIn(" done", "\n".join(self.log().splitlines()[before:]))
        status, _, body = self.send("GET", "/v1/models", {"Host": self.host, "Origin": "http://evil.example"})
        self.assertEqual(status, 403, body)

    def test_json_endpoints_take_only_json(self):
        for content_type in ("text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", None):
            headers = {"Host": self.host}
            if content_type:
                headers["Content-Type"] = content_type
            status, _, body = self.send("POST", "/v1/chat/completions", headers, self.body)
            self.assertEqual(status, 415, f"{content_type}: {body}")
            self.assertIn("application/json", json.loads(body)["error"]["message"])
        for content_type in ("application/json", "application/json; charset=utf-8"):
            status, _, body = self.send("POST", "/v1/chat/completions", {"Host": self.host, "Content-Type": content_type}, self.body)
            self.assertEqual(status, 200, f"{content_type}: {body}")

    def test_preflights_are_answered_for_allowed_origins_only(self):
        asked = {
            "Host": self.host,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization,content-type,x-stainless-os",
        }
        for origin in (f"http://localhost:{self.port + 1}", "http://127.0.0.1:5173", ADDED_ORIGIN, ENV_ORIGIN, "tauri://localhost"):
            status, headers, body = self.send("OPTIONS", "/v1/chat/completions", {**asked, "Origin": origin})
            self.assertEqual(status, 204, f"{origin}: {body}")
            self.assertEqual(headers.get("access-control-allow-origin"), origin)
            self.assertIn("POST", headers.get("access-control-allow-methods", ""))
            self.assertEqual(headers.get("access-control-allow-headers"), "authorization,content-type,x-stainless-os")
        for origin in ("http://evil.example", "https://chat.example.com.evil.example", "null"):
            status, headers, _ = self.send("OPTIONS", "/v1/chat/completions", {**asked, "Origin": origin})
            self.assertEqual(status, 403, origin)
            self.assertNotIn("access-control-allow-origin", headers)

    def test_an_allowed_page_reads_the_answer(self):
        for origin in (ADDED_ORIGIN, "http://localhost:3000"):
            status, headers, body = self.send(
                "POST", "/v1/chat/completions", {"Host": self.host, "Origin": origin, "Content-Type": "application/json"}, self.body
            )
            self.assertEqual(status, 200, body)
            self.assertEqual(headers.get("access-control-allow-origin"), origin)
            self.assertIn("Origin", headers.get("vary", ""))

    def test_a_refused_request_is_logged_with_its_reason_at_the_default_level(self):
        bad = json.dumps({"model": self.server.model, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": -1})
        status, _, body = self.send("POST", "/v1/chat/completions", {"Host": self.host, "Content-Type": "application/json"}, bad)
        self.assertEqual(status, 400, body)
        self.send("GET", "/v1/models", {"Host": f"evil.example:{self.port}"})
        # What axum's extractors refuse before a handler runs: a body that is no JSON, a path
        # that is no text.
        status, _, body = self.send("POST", "/v1/responses", {"Host": self.host, "Content-Type": "application/json"}, "{oops")
        self.assertEqual(status, 400, body)
        status, _, body = self.send("GET", "/v1/responses/%FF", {"Host": self.host})
        self.assertEqual(status, 400, body)
        self.assertEqual(json.loads(body)["error"]["param"], "id", "answered in OpenAI's shape")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            log = self.log()
            refusals = [line for line in log.splitlines() if "http refused" in line]
            if len(refusals) >= 4 and any("%FF" in line for line in refusals):
                break
            time.sleep(0.1)
        max_tokens_line = next((line for line in refusals if "max_tokens" in line and "status=400" in line), None)
        self.assertIsNotNone(max_tokens_line, log)
        host_line = next((line for line in refusals if "status=403" in line and "evil.example" in line), None)
        self.assertIsNotNone(host_line, log)
        self.assertIn("WARN", host_line)
        self.assertTrue(any("not valid JSON" in line for line in refusals), log)
        self.assertTrue(any("%FF" in line and "UTF-8" in line for line in refusals), log)
        # Every 4xx line says why.
        bare = [line for line in log.splitlines() if ": http method=" in line and "status=4" in line]
        self.assertFalse(bare, "4xx logged without a reason")


class KeyBeyondLoopback(unittest.TestCase):
    def test_listening_beyond_loopback_needs_a_key(self):
        if not CONFAB.is_file():
            raise unittest.SkipTest(f"{CONFAB} is not built")
        model = default_model()
        env = {k: v for k, v in os.environ.items() if k != "CONFAB_API_KEY"}
        began = time.monotonic()
        refused = subprocess.run(
            [str(CONFAB), "serve", "--model", str(model), "--host", "0.0.0.0", "--port", "0"],
            env=env, capture_output=True, text=True, timeout=120,
        )
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("--api-key", refused.stderr)
        self.assertLess(time.monotonic() - began, 60, "refused before loading the model")

    def test_with_a_key_it_listens_and_asks_for_it(self):
        server = model_server("--host", "0.0.0.0", "--api-key", "k-123")
        try:
            port = urllib.parse.urlsplit(server.base_url).port
            status, _, _ = exchange(port, "GET", "/v1/models", {"Host": f"127.0.0.1:{port}"})
            self.assertEqual(status, 401)
            status, _, body = exchange(port, "GET", "/v1/models", {"Host": f"127.0.0.1:{port}", "Authorization": "Bearer k-123"})
            self.assertEqual(status, 200, body)
            # Listening everywhere, any literal address names it; a foreign name still does not.
            status, _, _ = exchange(port, "GET", "/v1/models", {"Host": f"10.1.2.3:{port}", "Authorization": "Bearer k-123"})
            self.assertEqual(status, 200)
            status, _, _ = exchange(port, "GET", "/v1/models", {"Host": f"evil.example:{port}", "Authorization": "Bearer k-123"})
            self.assertEqual(status, 403)
        finally:
            self.assertEqual(server.stop(), 0)


if __name__ == "__main__":
    unittest.main()
