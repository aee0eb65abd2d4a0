"""Ollama's API of `confab serve` (`/api/*`), driven by the official `ollama` Python client
(pinned in scripts/setup.sh) and by ollama-js, the official JavaScript client (tests/server/ollama_js,
installed by setup with npm), as the apps that speak only Ollama's API call it.

The chat model is a copy of the tiny random Qwen3 wearing a thinking template (its words fall in
the reasoning block unless `think` is off), served with the tiny Qwen3-Embedding beside it; images
go to the tiny Gemma 4, which reads them. Replies are a few tokens: what is checked is the API,
not the model. Tool calls come from the turn's required tool choice, which Ollama's API has no
field for: Confab's own `tool_choice` (sent through the client's request method, the one its
`chat` uses) holds the random model to a call's grammar. `/api/pull` downloads from the loopback
hub mirror (tests/hub/mirror.py), named by HF_ENDPOINT as `confab pull` reads it.

Run: .deps/server/venv/bin/python -m unittest discover -s tests/server -p test_ollama.py -v
Environment: CARGO_TARGET_DIR (where `cargo build -p confab-cli` put `confab`).
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

import ollama

from test_openai import GEMMA4, ROOT, THINKING_TEMPLATE, Server

sys.path.insert(0, str(ROOT / "tests" / "hub"))
from mirror import Mirror, fixture_repo  # noqa: E402

try:
    import jsonschema
except ImportError:  # the setup script installs it; without it the schema is checked by hand below
    jsonschema = None

TINY = ROOT / "tests" / "reference" / "fixtures" / "tiny"
EMBEDDER = "qwen3_embedding"
HUB_REPO = "confab-test/tiny-llama"
OLLAMA_JS = pathlib.Path(__file__).resolve().parent / "ollama_js"

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        # An enum, so that the random model's call ends within a few tokens.
        "parameters": {"type": "object", "properties": {"city": {"type": "string", "enum": ["Paris", "Rome"]}}, "required": ["city"], "additionalProperties": False},
    },
}

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 12}, "age": {"type": "integer", "minimum": 0, "maximum": 120}},
    "required": ["name", "age"],
    "additionalProperties": False,
}

FEW = {"temperature": 0, "num_predict": 4}


def check_person(test: unittest.TestCase, text: str):
    value = json.loads(text)
    if jsonschema:
        jsonschema.validate(value, PERSON)
    else:
        test.assertEqual(set(value), {"name", "age"})
        test.assertIsInstance(value["name"], str)
        test.assertIsInstance(value["age"], int)


def post(base: str, path: str, body: bytes, content_type: str = "application/json") -> tuple[int, dict]:
    request = urllib.request.Request(base + path, data=body, headers={"Content-Type": content_type}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def get(base: str, path: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(base + path, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


class OllamaTest(unittest.TestCase):
    server: Server
    client: ollama.Client
    host: str

    @classmethod
    def start(cls, *args: str):
        cls.server = Server(*args)
        cls.host = cls.server.base_url.removesuffix("/v1")
        cls.client = ollama.Client(host=cls.host, timeout=120)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        code = cls.server.stop()
        assert code == 0, f"confab serve exited with {code} on Ctrl-C"

    def assert_ollama_error(self, error: ollama.ResponseError, status: int, says: str = ""):
        self.assertEqual(error.status_code, status, error.error)
        self.assertIn(says, error.error)

    def assert_still_serving(self):
        reply = self.client.chat(self.server.model, messages=[{"role": "user", "content": "Hi"}], think=False, options={"num_predict": 1})
        self.assertTrue(reply.done)


class TinyQwen3(OllamaTest):
    @classmethod
    def setUpClass(cls):
        cls.folder = pathlib.Path(tempfile.mkdtemp(prefix="confab-ollama-"))
        model = cls.folder / "tiny-qwen3-thinking"
        shutil.copytree(TINY / "qwen3", model)
        config = json.loads((model / "tokenizer_config.json").read_text())
        config["chat_template"] = THINKING_TEMPLATE
        (model / "tokenizer_config.json").write_text(json.dumps(config))
        # Room for the tools' prompt (the random weights do not care how long it may be).
        settings = json.loads((model / "config.json").read_text())
        settings["max_position_embeddings"] = 2048
        (model / "config.json").write_text(json.dumps(settings))
        cls.mirror = Mirror({HUB_REPO: fixture_repo(str(TINY / "llama"))}).__enter__()
        cls.hub_cache = cls.folder / "hub"
        # Made before the server starts, as a user's cache is: the server searches the folders
        # that exist when it starts.
        cls.hub_cache.mkdir()
        # The server reads the hub's endpoint and cache as `confab pull` does; no real token.
        saved = dict(os.environ)
        try:
            for name in [n for n in os.environ if n.startswith("HF_")]:
                del os.environ[name]
            os.environ.update(HF_ENDPOINT=cls.mirror.endpoint, HF_HUB_CACHE=str(cls.hub_cache))
            cls.start("--model", str(model), "--embedding-model", str(TINY / EMBEDDER))
        finally:
            os.environ.clear()
            os.environ.update(saved)

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.mirror.__exit__(None, None, None)
        shutil.rmtree(cls.folder, ignore_errors=True)

    def chat(self, content="Hi", **kwargs):
        kwargs.setdefault("options", FEW)
        kwargs.setdefault("think", False)
        return self.client.chat(self.server.model, messages=[{"role": "user", "content": content}], **kwargs)

    def test_chat_whole_and_streamed(self):
        whole = self.chat()
        self.assertTrue(whole.done)
        self.assertEqual(whole.model, self.server.model)
        self.assertEqual(whole.message.role, "assistant")
        self.assertTrue(whole.message.content)
        self.assertEqual((whole.done_reason, whole.eval_count), ("length", 4))
        self.assertGreater(whole.prompt_eval_count, 0)
        self.assertGreater(whole.total_duration, 0)
        self.assertEqual(whole.load_duration + whole.prompt_eval_duration + whole.eval_duration, whole.total_duration)
        self.assertTrue(whole.created_at.endswith("Z"))

        parts = list(self.chat(stream=True))
        self.assertEqual([p.done for p in parts], [False] * (len(parts) - 1) + [True])
        self.assertEqual("".join(p.message.content or "" for p in parts), whole.message.content)
        self.assertEqual((parts[-1].done_reason, parts[-1].eval_count, parts[-1].prompt_eval_count), ("length", 4, whole.prompt_eval_count))

        # A model named with Ollama's default tag is the same model.
        tagged = self.client.chat(self.server.model + ":latest", messages=[{"role": "user", "content": "Hi"}], think=False, options=FEW)
        self.assertEqual(tagged.message.content, whole.message.content)

    def test_generate_with_system_raw_and_stream(self):
        plain = self.client.generate(self.server.model, "Hi", think=False, options=FEW)
        self.assertTrue(plain.done)
        self.assertTrue(plain.response)
        self.assertEqual(plain.eval_count, 4)
        self.assertIsNone(plain.context)
        streamed = list(self.client.generate(self.server.model, "Hi", think=False, options=FEW, stream=True))
        self.assertEqual("".join(p.response for p in streamed), plain.response)
        self.assertTrue(streamed[-1].done)

        system = self.client.generate(self.server.model, "Hi", system="You are terse.", think=False, options=FEW)
        self.assertGreater(system.prompt_eval_count, plain.prompt_eval_count)
        raw = self.client.generate(self.server.model, "Hi", raw=True, options=FEW)
        self.assertLess(raw.prompt_eval_count, plain.prompt_eval_count, "a raw prompt skips the template")
        self.assertEqual(raw.eval_count, 4)

        for extra, says in [({"suffix": "return x"}, "suffix"), ({"template": "{{ .Prompt }}"}, "template")]:
            with self.subTest(refused=says), self.assertRaises(ollama.ResponseError) as caught:
                self.client.generate(self.server.model, "def f(", options=FEW, **extra)
            self.assert_ollama_error(caught.exception, 400, says)

    def test_an_empty_prompt_loads_and_keep_alive_is_read(self):
        loaded = self.client.generate(self.server.model, "")
        self.assertEqual((loaded.done, loaded.done_reason, loaded.response), (True, "load", ""))
        self.assertEqual(self.client.chat(self.server.model, messages=[]).done_reason, "load")
        # keep_alive 0 unloads the model once idle (/api/ps stops listing it); an empty prompt
        # loads it again.
        self.assertEqual(self.client.generate(self.server.model, "", keep_alive=0).done_reason, "unload")
        deadline = time.monotonic() + 10
        while self.server.model in [m.model for m in self.client.ps().models] and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertNotIn(self.server.model, [m.model for m in self.client.ps().models])
        self.assertEqual(self.client.generate(self.server.model, "").done_reason, "load")
        # Loaded again for this request: the time it took is its load_duration.
        self.assertEqual(self.client.generate(self.server.model, "", keep_alive=0).done_reason, "unload")
        while self.server.model in [m.model for m in self.client.ps().models] and time.monotonic() < deadline + 10:
            time.sleep(0.1)
        reloaded = self.client.generate(self.server.model, "Hi", options={"num_predict": 1})
        warm = self.client.generate(self.server.model, "Hi", options={"num_predict": 1})
        self.assertGreater(reloaded.load_duration, warm.load_duration)
        self.assertEqual(reloaded.load_duration + reloaded.prompt_eval_duration + reloaded.eval_duration, reloaded.total_duration)
        self.assertIn(self.server.model, [m.model for m in self.client.ps().models])
        for keep in ["0s", 300, -1, "1h30m", "5m"]:
            with self.subTest(keep_alive=keep):
                self.assertTrue(self.chat(keep_alive=keep, options={"num_predict": 1}).done)
        with self.assertRaises(ollama.ResponseError) as caught:
            self.chat(keep_alive="soon")
        self.assert_ollama_error(caught.exception, 400, "keep_alive")

    def test_think_puts_the_reasoning_apart(self):
        thinking = self.chat(think=True, options={"temperature": 0, "num_predict": 6})
        self.assertTrue(thinking.message.thinking, "the reply opened in the reasoning block")
        streamed = list(self.chat(think=True, options={"temperature": 0, "num_predict": 6}, stream=True))
        self.assertEqual("".join(p.message.thinking or "" for p in streamed), thinking.message.thinking)
        off = self.chat(think=False, options={"temperature": 0, "num_predict": 6})
        self.assertFalse(off.message.thinking)
        self.assertTrue(off.message.content)
        self.assertGreater(off.prompt_eval_count, thinking.prompt_eval_count, "the template closes the block when thinking is off")
        level = self.chat(think="high", options={"temperature": 0, "num_predict": 6})
        self.assertEqual(level.prompt_eval_count, thinking.prompt_eval_count)
        generated = self.client.generate(self.server.model, "Hi", think=True, options={"temperature": 0, "num_predict": 6})
        self.assertTrue(generated.thinking)

    def required_call(self, stream: bool):
        body = {
            "model": self.server.model,
            "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
            "tools": [WEATHER],
            "tool_choice": "required",
            "think": False,
            "options": {"temperature": 0, "num_predict": 60},
            "stream": stream,
        }
        return self.client._request(ollama.ChatResponse, "POST", "/api/chat", json=body, stream=stream)

    def test_tools_are_called_and_answered(self):
        whole = self.required_call(stream=False)
        calls = whole.message.tool_calls
        self.assertEqual(len(calls), 1, whole.message)
        self.assertEqual(calls[0].function.name, "get_weather")
        self.assertIsInstance(calls[0].function.arguments, dict)
        self.assertIn(calls[0].function.arguments["city"], ["Paris", "Rome"])

        parts = list(self.required_call(stream=True))
        streamed = [c for p in parts for c in (p.message.tool_calls or [])]
        self.assertEqual([(c.function.name, dict(c.function.arguments)) for c in streamed], [(calls[0].function.name, dict(calls[0].function.arguments))])
        self.assertTrue(parts[-1].done)

        # The call and its result go back through the template, the tools given as Python
        # functions (the client writes their schemas); the model answers.
        def get_weather(city: str) -> str:
            """The weather in a city.

            Args:
              city: The city's name.
            """
            return "Sunny"

        asked = {"role": "user", "content": "What is the weather in Paris?"}
        first = self.client.chat(self.server.model, messages=[asked], tools=[get_weather], think=False, options=FEW)
        answered = self.client.chat(
            self.server.model,
            messages=[asked, whole.message, {"role": "tool", "content": "Sunny, 21 degrees.", "tool_name": "get_weather"}],
            tools=[get_weather],
            think=False,
            options=FEW,
        )
        self.assertGreater(answered.prompt_eval_count, first.prompt_eval_count)
        self.assertTrue(answered.done)

        with self.assertRaises(ollama.ResponseError) as caught:
            self.client._request(ollama.ChatResponse, "POST", "/api/chat", json={"model": self.server.model, "messages": [asked], "tools": [WEATHER], "tool_choice": "get_time"})
        self.assert_ollama_error(caught.exception, 400, "get_time")

    def test_format_holds_to_a_schema(self):
        options = {"temperature": 0.8, "num_predict": 80, "seed": 3}
        reply = self.chat("Someone as JSON", format=PERSON, options=options)
        check_person(self, reply.message.content)
        streamed = list(self.chat("Someone as JSON", format=PERSON, options=options, stream=True))
        check_person(self, "".join(p.message.content or "" for p in streamed))
        generated = self.client.generate(self.server.model, "Someone as JSON", format=PERSON, think=False, options=options)
        check_person(self, generated.response)
        any_json = self.chat("JSON please", format="json", options=options)
        self.assertIsInstance(json.loads(any_json.message.content), dict)
        with self.assertRaises(ollama.ResponseError) as caught:
            self.client._request(ollama.ChatResponse, "POST", "/api/chat", json={"model": self.server.model, "messages": [{"role": "user", "content": "Hi"}], "format": "xml"})
        self.assert_ollama_error(caught.exception, 400, "format")

    def test_embed_and_the_legacy_embeddings(self):
        out = self.client.embed(EMBEDDER, input=["a cat", "a dog"])
        self.assertEqual(out.model, EMBEDDER)
        self.assertEqual(len(out.embeddings), 2)
        self.assertGreater(out.prompt_eval_count, 0)
        one = self.client.embed(EMBEDDER, input="a cat")
        self.assertEqual(len(one.embeddings), 1)
        legacy = self.client.embeddings(EMBEDDER, prompt="a cat")
        self.assertEqual(len(legacy.embedding), len(one.embeddings[0]))
        self.assertTrue(all(abs(a - b) < 1e-5 for a, b in zip(legacy.embedding, one.embeddings[0])))
        short = self.client.embed(EMBEDDER, input="a cat", dimensions=8)
        self.assertEqual(len(short.embeddings[0]), 8)
        with self.assertRaises(ollama.ResponseError) as caught:
            self.client.embed(self.server.model, input="a cat")
        self.assert_ollama_error(caught.exception, 400, "chat model")

    def test_tags_show_ps_and_version(self):
        # Every model the server may load is listed (those it found on disk too, loaded or not).
        names = [m.model for m in self.client.list().models]
        self.assertLessEqual({self.server.model, EMBEDDER}, set(names))
        tag = next(m for m in self.client.list().models if m.model == self.server.model)
        self.assertEqual((tag.details.format, tag.details.family), ("safetensors", "qwen3"))
        self.assertGreater(tag.size, 0)

        shown = self.client.show(self.server.model)
        self.assertEqual(shown.capabilities, ["completion", "tools", "thinking"])
        self.assertEqual(shown.modelinfo["general.architecture"], "qwen3")
        self.assertGreater(shown.modelinfo["qwen3.context_length"], 0)
        self.assertEqual(self.client.show(EMBEDDER).capabilities, ["embedding"])
        with self.assertRaises(ollama.ResponseError) as caught:
            self.client.show("llama3.2")
        self.assert_ollama_error(caught.exception, 404, "/api/tags")

        # As docs/server.md says to point a client at it: OLLAMA_HOST, which the client reads.
        saved = os.environ.get("OLLAMA_HOST")
        os.environ["OLLAMA_HOST"] = self.host
        try:
            with ollama.Client() as client:
                self.assertEqual(sorted(m.model for m in client.list().models), sorted(names))
        finally:
            if saved is None:
                del os.environ["OLLAMA_HOST"]
            else:
                os.environ["OLLAMA_HOST"] = saved

        # Both were loaded at start; with --keep-alive unset they stay.
        running = {m.model: m for m in self.client.ps().models}
        self.assertLessEqual({self.server.model, EMBEDDER}, set(running))
        self.assertGreater(running[self.server.model].context_length, 0)
        self.assertGreater(running[self.server.model].size, 0)

        with urllib.request.urlopen(self.host + "/", timeout=10) as response:
            self.assertIn("Confab is running", response.read().decode())
        with self.assertRaises(ollama.ResponseError) as caught:
            self.client.chat(EMBEDDER, messages=[{"role": "user", "content": "Hi"}])
        self.assert_ollama_error(caught.exception, 400, "/api/embed")
        status, version = get(self.host, "/api/version")
        self.assertEqual(status, 200)
        self.assertRegex(version["version"], r"^\d+\.\d+\.\d+$")

    def test_pull_from_the_hub(self):
        lines = list(self.client.pull(f"hf.co/{HUB_REPO}", stream=True))
        self.assertEqual(lines[0].status, "pulling manifest")
        self.assertEqual(lines[-1].status, "success")
        progress = [line for line in lines if line.status.startswith("pulling ") and line.total]
        weights = [line for line in progress if line.status == "pulling model.safetensors"]
        self.assertTrue(weights, [line.status for line in lines])
        self.assertTrue(weights[-1].digest.startswith("sha256:"))
        self.assertEqual(weights[-1].completed, weights[-1].total)
        snapshot = self.hub_cache / ("models--" + HUB_REPO.replace("/", "--")) / "snapshots" / Mirror.commit(self.mirror.repos[HUB_REPO])
        self.assertEqual((snapshot / "model.safetensors").read_bytes(), self.mirror.repos[HUB_REPO]["model.safetensors"])
        # Again, whole: nothing left to fetch.
        self.assertEqual(self.client.pull(HUB_REPO).status, "success")
        # Pulled into the cache the server finds models in: listed, and loaded when named.
        self.assertIn(HUB_REPO, [m.model for m in self.client.list().models])
        self.assertEqual(self.client.generate(HUB_REPO, "Hi", options={"num_predict": 2}, keep_alive=0).eval_count, 2)

        for name, status, says in [("llama3.2", 400, "Hugging Face"), ("hf.co/confab-test/missing", 404, "not found"), (f"hf.co/{HUB_REPO}:Q4_K_M", 404, "no GGUF file")]:
            with self.subTest(name=name), self.assertRaises(ollama.ResponseError) as caught:
                self.client.pull(name)
            self.assert_ollama_error(caught.exception, status, says)

    def test_bad_requests_get_ollamas_errors(self):
        with self.assertRaises(ollama.ResponseError) as caught:
            self.client.chat("llama3.2", messages=[{"role": "user", "content": "Hi"}])
        self.assert_ollama_error(caught.exception, 404, 'model "llama3.2" not found')
        with self.assertRaises(ollama.ResponseError) as caught:
            list(self.client.generate("llama3.2", "Hi", stream=True))
        self.assert_ollama_error(caught.exception, 404, "/api/pull")
        for options, says in [({"temperature": "hot"}, "options.temperature"), ({"num_predict": 2.5}, "options.num_predict"), ({"stop": [1]}, "options.stop")]:
            with self.subTest(options=options), self.assertRaises(ollama.ResponseError) as caught:
                self.chat(options=options)
            self.assert_ollama_error(caught.exception, 400, says)
        with self.assertRaises(ollama.ResponseError) as caught:
            self.chat(think="max")
        self.assert_ollama_error(caught.exception, 400, "think")
        with self.assertRaises(ollama.ResponseError) as caught:
            self.client.chat(self.server.model, messages=[{"role": "user", "content": "What is this?", "images": [base64.b64encode(b"\x89PNG").decode()]}])
        self.assert_ollama_error(caught.exception, 400, "does not read images")

        for path, body, content_type, status in [
            ("/api/chat", b"{not json", "application/json", 400),
            ("/api/chat", json.dumps({"model": self.server.model, "messages": "Hi"}).encode(), "application/json", 400),
            ("/api/generate", b'{"model": "x", "prompt": "Hi"}', "application/x-www-form-urlencoded", 415),
            ("/api/nope", b"{}", "application/json", 404),
        ]:
            with self.subTest(path=path, body=body[:20]):
                got, answer = post(self.host, path, body, content_type)
                self.assertEqual(got, status, answer)
                self.assertEqual(list(answer), ["error"])
                self.assertTrue(answer["error"])
        self.assert_still_serving()

    @unittest.skipUnless((OLLAMA_JS / "node_modules" / "ollama").is_dir() and shutil.which("node"), "ollama-js is not installed; run scripts/setup.sh")
    def test_ollama_js_speaks_to_it(self):
        """ollama-js, the official JavaScript client: its own request shapes end to end."""
        env = dict(os.environ, OLLAMA_TEST_HOST=self.host, OLLAMA_TEST_MODEL=self.server.model, OLLAMA_TEST_EMBEDDER=EMBEDDER)
        out = subprocess.run(["node", str(OLLAMA_JS / "check.mjs")], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        result = json.loads(out.stdout)
        self.assertLessEqual({self.server.model, EMBEDDER}, set(result["models"]))
        self.assertTrue(result["chat"])
        self.assertEqual(result["streamed"], result["chat"])
        self.assertTrue(result["generate"])
        self.assertEqual(result["embeddings"], 2)
        self.assertIn("tools", result["capabilities"])
        self.assertEqual(result["unknown_model"], 404)


class WithKey(OllamaTest):
    """With a key set, /api/* needs it as /v1/* does: the Python client sends OLLAMA_API_KEY as a
    bearer token; without it the answer is a 401 in Ollama's shape."""

    @classmethod
    def setUpClass(cls):
        cls.start("--model", str(TINY / "qwen3"), "--api-key", "ollama-key")

    def test_the_key_is_required(self):
        with self.assertRaises(ollama.ResponseError) as caught:
            self.client.list()
        self.assert_ollama_error(caught.exception, 401, "API key")
        saved = os.environ.get("OLLAMA_API_KEY")
        os.environ["OLLAMA_API_KEY"] = "ollama-key"
        try:
            with ollama.Client(host=self.host) as client:
                self.assertIn("qwen3", [m.model for m in client.list().models])
                self.assertEqual(client.generate("qwen3", "Hi", options={"num_predict": 1}).eval_count, 1)
        finally:
            if saved is None:
                del os.environ["OLLAMA_API_KEY"]
            else:
                os.environ["OLLAMA_API_KEY"] = saved


class OllamaStoreModel(OllamaTest):
    """A model from Ollama's own store (a GGUF blob and its manifest) is named as Ollama names it,
    with or without its `:latest` tag."""

    @classmethod
    def setUpClass(cls):
        cls.folder = pathlib.Path(tempfile.mkdtemp(prefix="confab-ollama-store-"))
        store = cls.folder / ".ollama" / "models"
        gguf = (TINY / "lfm2_gguf" / "lfm2.gguf").read_bytes()
        digest = hashlib.sha256(gguf).hexdigest()
        (store / "blobs").mkdir(parents=True)
        blob = store / "blobs" / f"sha256-{digest}"
        blob.write_bytes(gguf)
        manifest = store / "manifests" / "registry.ollama.ai" / "library" / "tiny-lfm2" / "latest"
        manifest.parent.mkdir(parents=True)
        layer = {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}", "size": len(gguf)}
        manifest.write_text(json.dumps({"schemaVersion": 2, "layers": [layer]}))
        cls.start("--model", str(blob))

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.folder, ignore_errors=True)

    def test_named_as_ollama_names_it(self):
        self.assertEqual(self.server.model, "tiny-lfm2:latest")
        tag = next(m for m in self.client.list().models if m.model == "tiny-lfm2:latest")
        self.assertEqual(tag.details.format, "gguf")
        for name in ["tiny-lfm2:latest", "tiny-lfm2"]:
            with self.subTest(name=name):
                reply = self.client.generate(name, "Hi", options={"num_predict": 2})
                self.assertEqual((reply.model, reply.eval_count), ("tiny-lfm2:latest", 2))


class TinyGemma4Images(OllamaTest):
    """The tiny random Gemma 4 reads images: sent as base64 in `images`, each adds its soft tokens."""

    @classmethod
    def setUpClass(cls):
        cls.start("--model", str(GEMMA4))

    def test_images_in_chat_and_generate(self):
        png = (GEMMA4 / "media" / "gradient.png").read_bytes()
        ask = {"role": "user", "content": "What is this?"}
        text_only = self.client.chat(self.server.model, messages=[ask], options={"num_predict": 2})
        with_image = self.client.chat(self.server.model, messages=[{**ask, "images": [png]}], options={"num_predict": 2})
        self.assertEqual(with_image.eval_count, 2)
        # The image's soft tokens (63 for this fixture, see media_reference.json) and its markers.
        self.assertGreaterEqual(with_image.prompt_eval_count - text_only.prompt_eval_count, 63)
        generated = self.client.generate(self.server.model, "What is this?", images=[png], options={"num_predict": 2})
        self.assertGreaterEqual(generated.prompt_eval_count, 63)
        self.assertIn("vision", self.client.show(self.server.model).capabilities)
        with self.assertRaises(ollama.ResponseError) as caught:
            self.client.chat(self.server.model, messages=[{**ask, "images": [base64.b64encode(b"not an image at all").decode()]}])
        self.assert_ollama_error(caught.exception, 400)


if __name__ == "__main__":
    unittest.main()
