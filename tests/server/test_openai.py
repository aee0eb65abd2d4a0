"""`confab serve` driven by the real `openai` Python client (pinned in scripts/setup.sh).

Runs the built CLI (`cargo build -p confab-cli`) on the default model, SmolLM2-135M-Instruct,
on the tiny Gemma 4 fixture (which reads images and audio), and on the tiny DiffusionGemma
(which writes canvases by denoising). Replies are kept to a few
tokens: what is checked is the API, not the model. Every error must come in OpenAI's shape,
and the server must still answer after each.

Run: .deps/server/venv/bin/python -m unittest discover -s tests/server -v
Environment: CONFAB_SERVER_MODEL (the default model file), CARGO_TARGET_DIR.
"""
from __future__ import annotations

import base64
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import urllib.error
import urllib.request

import jsonschema
import openai

ROOT = pathlib.Path(__file__).resolve().parents[2]
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
CONFAB = TARGET / "debug" / "confab"
GEMMA4 = ROOT / "tests" / "reference" / "fixtures" / "tiny" / "gemma4"
DIFFUSION_GEMMA = ROOT / "tests" / "reference" / "fixtures" / "tiny" / "diffusion_gemma"
KEY = "test-key-123"
# Small, so the oversized-body test sends little.
BODY_LIMIT_MIB = 2


def default_model() -> pathlib.Path:
    """Where setup installed the default model (same rules as AppPaths::from_env)."""
    if os.environ.get("CONFAB_SERVER_MODEL"):
        return pathlib.Path(os.environ["CONFAB_SERVER_MODEL"])
    manifest = json.loads((ROOT / "assets" / "default-model.json").read_text())
    if sys.platform == "darwin":
        models = pathlib.Path.home() / "Library" / "Application Support" / "Confab" / "models"
    else:
        data = os.environ.get("XDG_DATA_HOME") or str(pathlib.Path.home() / ".local" / "share")
        models = pathlib.Path(data) / "confab" / "models"
    return models / manifest["folder"] / manifest["file"]


class Server:
    """`confab serve` on a free port in a fresh CONFAB_HOME; stopped with Ctrl-C (SIGINT)."""

    def __init__(self, *args: str, home: pathlib.Path | None = None):
        """`home`: an existing CONFAB_HOME to serve from (kept when the server stops)."""
        if not CONFAB.is_file():
            raise unittest.SkipTest(f"{CONFAB} is not built; run cargo build -p confab-cli")
        self.owns_home = home is None
        self.home = home or pathlib.Path(tempfile.mkdtemp(prefix="confab-serve-"))
        env = dict(os.environ, CONFAB_HOME=str(self.home))
        self.log = open(self.home / "stderr.log", "w")
        self.process = subprocess.Popen(
            [str(CONFAB), "serve", "--port", "0", *args], env=env, stdout=subprocess.PIPE, stderr=self.log, text=True,
        )
        line = self.process.stdout.readline()  # printed once the model is loaded and listening
        match = re.search(r"model `([^`]+)` at (http://\S+)", line)
        if not match:
            self.stop()
            raise AssertionError(f"confab serve did not start: {line!r}\n{(self.home / 'stderr.log').read_text()}")
        self.model, self.base_url = match.group(1), match.group(2)

    def health(self) -> dict:
        with urllib.request.urlopen(self.base_url.removesuffix("/v1") + "/health", timeout=10) as response:
            return json.load(response)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process.stdout.close()
        self.log.close()
        if self.owns_home:
            shutil.rmtree(self.home, ignore_errors=True)
        return self.process.returncode


class ServerTest(unittest.TestCase):
    server: Server
    client: openai.OpenAI

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        assert code == 0, f"confab serve exited with {code} on Ctrl-C"

    def chat(self, content, **kwargs):
        kwargs.setdefault("max_tokens", 4)
        kwargs.setdefault("temperature", 0)
        return self.client.chat.completions.create(
            model=self.server.model, messages=[{"role": "user", "content": content}], **kwargs
        )

    def assert_error_shape(self, error: openai.APIStatusError, status: int, param: str | None = None):
        self.assert_error_body(error.status_code, error.response.json(), status, param)

    def assert_error_body(self, got_status: int, body: dict, status: int, param: str | None = None):
        self.assertEqual(got_status, status)
        self.assertEqual(set(body), {"error"})
        self.assertEqual(set(body["error"]), {"message", "type", "param", "code"})
        self.assertTrue(body["error"]["message"])
        self.assertTrue(body["error"]["type"])
        if param is not None:
            self.assertEqual(body["error"]["param"], param)

    def assert_still_serving(self):
        reply = self.chat("Hi", max_tokens=1)
        self.assertEqual(len(reply.choices), 1)
        self.assertEqual(self.server.health()["status"], "ok")


class SmolLM2(ServerTest):
    @classmethod
    def setUpClass(cls):
        model = default_model()
        if not model.is_file():
            raise unittest.SkipTest(f"the default model is not installed at {model}; run scripts/setup.sh")
        cls.server = Server("--model", str(model), "--api-key", KEY, "--max-body-mib", str(BODY_LIMIT_MIB))
        cls.client = openai.OpenAI(base_url=cls.server.base_url, api_key=KEY, max_retries=0, timeout=120)

    def test_models_lists_the_served_model(self):
        models = self.client.models.list().data
        self.assertEqual([m.id for m in models], [self.server.model])
        self.assertEqual(models[0].owned_by, "confab")

    def test_plain_and_streamed_chat_agree(self):
        plain = self.chat("Name a colour.", max_tokens=6)
        text = plain.choices[0].message.content
        self.assertTrue(text)
        self.assertEqual(plain.choices[0].message.role, "assistant")
        self.assertIn(plain.choices[0].finish_reason, ("stop", "length"))
        self.assertLessEqual(plain.usage.completion_tokens, 6)
        self.assertEqual(plain.usage.total_tokens, plain.usage.prompt_tokens + plain.usage.completion_tokens)

        chunks = list(self.chat("Name a colour.", max_tokens=6, stream=True, stream_options={"include_usage": True}))
        self.assertEqual(chunks[0].choices[0].delta.role, "assistant")
        streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        self.assertEqual(streamed, text, "greedy: the stream says what the whole answer said")
        finals = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
        self.assertEqual(finals, [plain.choices[0].finish_reason])
        self.assertEqual(chunks[-1].choices, [])
        self.assertEqual(chunks[-1].usage.completion_tokens, plain.usage.completion_tokens)

    def test_completions_whole_and_streamed(self):
        whole = self.client.completions.create(model=self.server.model, prompt="The capital of France is", max_tokens=4, temperature=0)
        self.assertEqual(whole.object, "text_completion")
        self.assertTrue(whole.choices[0].text)
        self.assertEqual(whole.usage.completion_tokens, 4)
        streamed = self.client.completions.create(model=self.server.model, prompt="The capital of France is", max_tokens=4, temperature=0, stream=True)
        self.assertEqual("".join(c.choices[0].text for c in streamed if c.choices), whole.choices[0].text)

    def test_repeated_prefix_is_reported_as_cached(self):
        system = "You are a terse assistant for a hardware store. " * 20
        ask = lambda q: self.client.chat.completions.create(
            model=self.server.model, max_tokens=1, temperature=0,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": q}],
        )
        first = ask("Do you sell hammers?")
        second = ask("Do you sell nails?")
        cached = second.usage.prompt_tokens_details.cached_tokens
        # The whole system prompt (well over 150 tokens) comes from the prefix cache.
        self.assertGreater(cached, 150)
        self.assertLess(cached, second.usage.prompt_tokens)
        self.assertGreaterEqual(first.usage.prompt_tokens, 150)

    def test_stop_strings_end_the_reply_before_them(self):
        prompt = "List three fruits."
        free = self.chat(prompt, max_tokens=8).choices[0].message.content
        words = free.split()
        self.assertGreaterEqual(len(words), 2, free)
        stop = words[1]
        stopped = self.chat(prompt, max_tokens=8, stop=[stop, "never-appears"])
        self.assertEqual(stopped.choices[0].message.content, free[: free.index(stop)])
        self.assertEqual(stopped.choices[0].finish_reason, "stop")

    def test_closing_the_stream_cancels_the_generation(self):
        stream = self.client.completions.create(
            model=self.server.model, prompt="1, 2, 3, 4, 5,", max_tokens=2000, temperature=0, stream=True
        )
        received = 0
        for _ in stream:
            received += 1
            if received == 3:
                break
        stream.close()
        # 2000 tokens would take minutes here; a cancelled request ends within a step.
        deadline = time.time() + 30
        while self.server.health()["active_requests"] and time.time() < deadline:
            time.sleep(0.2)
        self.assertEqual(self.server.health()["active_requests"], 0)
        self.assert_still_serving()

    def test_malformed_json(self):
        request = urllib.request.Request(
            self.server.base_url + "/chat/completions", data=b'{"model": "x", "messages": [',
            headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
        )
        with self.assertRaises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=30)
        self.assert_error_body(caught.exception.code, json.load(caught.exception), 400)
        self.assert_still_serving()

    def test_unknown_model(self):
        with self.assertRaises(openai.NotFoundError) as caught:
            self.client.chat.completions.create(model="gpt-9", messages=[{"role": "user", "content": "Hi"}], max_tokens=1)
        self.assert_error_shape(caught.exception, 404, "model")
        self.assertEqual(caught.exception.code, "model_not_found")
        self.assert_still_serving()

    def test_negative_max_tokens(self):
        with self.assertRaises(openai.BadRequestError) as caught:
            self.chat("Hi", max_tokens=-5)
        self.assert_error_shape(caught.exception, 400, "max_tokens")
        self.assert_still_serving()

    def test_oversized_body(self):
        with self.assertRaises(openai.APIStatusError) as caught:
            self.chat("x" * ((BODY_LIMIT_MIB << 20) + 1000))
        self.assert_error_shape(caught.exception, 413)
        self.assert_still_serving()

    def test_image_for_a_text_only_model(self):
        png = base64.b64encode((GEMMA4 / "media" / "gradient.png").read_bytes()).decode()
        with self.assertRaises(openai.BadRequestError) as caught:
            self.chat([{"type": "text", "text": "What is this?"}, {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}}])
        self.assert_error_shape(caught.exception, 400)
        self.assertIn("does not read images", caught.exception.message)
        self.assert_still_serving()

    PERSON = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 20},
            "age": {"type": "integer", "minimum": 0, "maximum": 120},
            "role": {"enum": ["admin", "user", "guest"]},
        },
        "required": ["name", "age", "role"],
        "additionalProperties": False,
    }

    def test_response_format_json_schema_strict(self):
        format = {"type": "json_schema", "json_schema": {"name": "person", "schema": self.PERSON, "strict": True}}
        reply = self.chat("Describe a user of a web site.", max_tokens=48, response_format=format)
        text = reply.choices[0].message.content
        jsonschema.validate(json.loads(text), self.PERSON)
        self.assertEqual(reply.choices[0].finish_reason, "stop", "the grammar ended the reply")
        streamed = self.chat("Describe a user of a web site.", max_tokens=48, response_format=format, stream=True)
        self.assertEqual("".join(c.choices[0].delta.content or "" for c in streamed if c.choices), text)

    def test_a_reply_with_no_max_tokens_ends_where_its_format_does(self):
        # No max_tokens: the reply may run to the context's end; the grammar ends it first.
        schema = {"type": "string", "enum": ["yes", "no"]}
        reply = self.client.chat.completions.create(
            model=self.server.model, messages=[{"role": "user", "content": "Is the sky blue?"}], temperature=0,
            response_format={"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}},
        )
        self.assertIn(json.loads(reply.choices[0].message.content), ("yes", "no"))
        self.assertEqual(reply.choices[0].finish_reason, "stop")

    def test_response_format_json_object(self):
        reply = self.chat("Give a colour and its hex code as JSON.", max_tokens=40, response_format={"type": "json_object"})
        text = reply.choices[0].message.content
        self.assertTrue(text.startswith("{"), text)
        if reply.choices[0].finish_reason == "stop":
            self.assertIsInstance(json.loads(text), dict)
        plain = self.chat("Hi", max_tokens=2, response_format={"type": "text"})
        self.assertTrue(plain.choices[0].message.content)

    def test_response_format_errors_name_the_param(self):
        unsupported = {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}
        bad = [
            {"type": "json_schema", "json_schema": {"name": "nums", "schema": unsupported, "strict": True}},
            {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "no-such-type"}}},
            {"type": "xml"},
            {"type": "json_schema"},
        ]
        for format in bad:
            with self.assertRaises(openai.BadRequestError) as caught:
                self.chat("Hi", response_format=format)
            self.assert_error_shape(caught.exception, 400, "response_format")
        self.assertIn("uniqueItems", self.last_message(bad[0]))
        self.assert_still_serving()

    def last_message(self, format) -> str:
        try:
            self.chat("Hi", response_format=format)
        except openai.BadRequestError as e:
            return e.message
        self.fail("expected a 400")

    def test_wrong_api_key(self):
        other = openai.OpenAI(base_url=self.server.base_url, api_key="wrong", max_retries=0)
        with self.assertRaises(openai.AuthenticationError) as caught:
            other.models.list()
        self.assert_error_shape(caught.exception, 401)
        self.assert_still_serving()


class SmolLM2MemoryBudget(ServerTest):
    """`--memory-budget`: a request that could never fit in it is refused in OpenAI's shape,
    saying what to change; one that fits is answered; a budget that means nothing, or a
    `--kv-bits` MLX cannot quantize to, stops the server before it starts, saying why."""

    @classmethod
    def setUpClass(cls):
        model = default_model()
        if not model.is_file():
            raise unittest.SkipTest(f"the default model is not installed at {model}; run scripts/setup.sh")
        # Room for short replies (about 25 MB each at full precision), not for the whole context.
        cls.server = Server("--model", str(model), "--memory-budget", "60MB")
        cls.client = openai.OpenAI(base_url=cls.server.base_url, api_key="unused", max_retries=0, timeout=120)

    def test_a_request_that_could_never_fit_is_refused_saying_what_to_change(self):
        with self.assertRaises(openai.BadRequestError) as caught:
            self.chat("Hi", max_tokens=8000)
        self.assert_error_shape(caught.exception, 400, "max_tokens")
        message = caught.exception.message
        for says in ["more than the 60 MB budget", "lower max_tokens", "--kv-bits", "--memory-budget"]:
            self.assertIn(says, message)
        self.assert_still_serving()

    def test_bad_budgets_and_widths_stop_the_server_saying_why(self):
        for args, says in [
            (["--memory-budget", "lots"], "give a size such as 4GB"),
            (["--memory-budget", "150%"], "between 0% and 100%"),
            (["--kv-bits", "3"], "4 or 8 bits"),
        ]:
            with self.subTest(args=args):
                run = subprocess.run(
                    [str(CONFAB), "serve", "--port", "0", "--model", str(default_model()), *args],
                    capture_output=True, text=True, timeout=120,
                )
                self.assertNotEqual(run.returncode, 0)
                self.assertIn(says, run.stderr)


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city today.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
CLOCK = {"type": "function", "function": {"name": "get_time", "description": "The time now.", "parameters": {"type": "object", "properties": {}, "additionalProperties": False}}}


class SmolLM2Tools(ServerTest):
    """Tools on the default model, whose template has none: the engine writes them into the system
    prompt in the fallback `<tool_call>` format and reads its calls back."""

    @classmethod
    def setUpClass(cls):
        model = default_model()
        if not model.is_file():
            raise unittest.SkipTest(f"the default model is not installed at {model}; run scripts/setup.sh")
        cls.server = Server("--model", str(model))
        cls.client = openai.OpenAI(base_url=cls.server.base_url, api_key="unused", max_retries=0, timeout=120)

    def test_a_named_tool_is_called_whole_streamed_and_answered(self):
        ask = "What is the weather in Paris?"
        choice = {"type": "function", "function": {"name": "get_weather"}}
        whole = self.chat(ask, max_tokens=80, tools=[WEATHER, CLOCK], tool_choice=choice)
        self.assertEqual(whole.choices[0].finish_reason, "tool_calls")
        calls = whole.choices[0].message.tool_calls
        self.assertEqual(len(calls), 1)
        self.assertEqual(calls[0].function.name, "get_weather")
        self.assertIsInstance(json.loads(calls[0].function.arguments), dict)
        self.assertTrue(calls[0].id.startswith("call_"))

        chunks = list(self.chat(ask, max_tokens=80, tools=[WEATHER, CLOCK], tool_choice=choice, stream=True))
        deltas = [call for c in chunks if c.choices for call in (c.choices[0].delta.tool_calls or [])]
        self.assertEqual([(d.index, d.function.name) for d in deltas], [(0, "get_weather")])
        self.assertEqual(json.loads(deltas[0].function.arguments), json.loads(calls[0].function.arguments))
        self.assertEqual([c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason], ["tool_calls"])

        # The call and its result go back through the template; the model answers.
        messages = [
            {"role": "user", "content": ask},
            {"role": "assistant", "content": None, "tool_calls": [calls[0].model_dump()]},
            {"role": "tool", "tool_call_id": calls[0].id, "content": "Sunny, 21 degrees."},
        ]
        answer = self.client.chat.completions.create(model=self.server.model, messages=messages, tools=[WEATHER], max_tokens=6, temperature=0)
        self.assertGreater(answer.usage.prompt_tokens, whole.usage.prompt_tokens)
        self.assertEqual(answer.usage.completion_tokens, 6)

    def test_parallel_calls_and_their_results_go_back_through_the_template(self):
        def call(id, name, arguments):
            return {"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}
        ask = {"role": "user", "content": "Weather in Paris and in Rome?"}
        both = [call("call_a", "get_weather", '{"city": "Paris"}'), call("call_b", "get_weather", '{"city": "Rome"}')]
        results = [{"role": "tool", "tool_call_id": "call_a", "content": "Sunny"}, {"role": "tool", "tool_call_id": "call_b", "content": "Rain"}]
        one = self.client.chat.completions.create(
            model=self.server.model, messages=[ask, {"role": "assistant", "tool_calls": both[:1]}, results[0]], tools=[WEATHER], max_tokens=1,
        )
        two = self.client.chat.completions.create(
            model=self.server.model, messages=[ask, {"role": "assistant", "tool_calls": both}, *results], tools=[WEATHER], max_tokens=1,
        )
        self.assertGreater(two.usage.prompt_tokens, one.usage.prompt_tokens)

    def test_required_calls_one_of_the_tools(self):
        reply = self.chat("What time is it?", max_tokens=80, tools=[WEATHER, CLOCK], tool_choice="required")
        calls = reply.choices[0].message.tool_calls
        self.assertTrue(calls, reply.choices[0].message.content)
        self.assertIn(calls[0].function.name, ("get_weather", "get_time"))

    def test_tool_choice_none_hides_the_tools(self):
        plain = self.chat("Hi", max_tokens=3)
        none = self.chat("Hi", max_tokens=3, tools=[WEATHER], tool_choice="none")
        self.assertEqual(none.usage.prompt_tokens, plain.usage.prompt_tokens)
        self.assertIsNone(none.choices[0].message.tool_calls)

    def test_bad_tool_requests_are_refused_in_openais_shape(self):
        cases = [
            ({"tools": [WEATHER], "tool_choice": {"type": "function", "function": {"name": "get_time"}}}, "tool_choice"),
            ({"tools": [WEATHER], "tool_choice": "sometimes"}, "tool_choice"),
            ({"tool_choice": "required"}, "tool_choice"),
            ({"tools": [{**CLOCK, "function": {**CLOCK["function"], "name": f"t{i}"}} for i in range(129)]}, "tools"),
            ({"tools": [{"type": "function", "function": {"name": "has space"}}]}, "tools[0]"),
        ]
        for extra, param in cases:
            with self.subTest(param=param), self.assertRaises(openai.BadRequestError) as caught:
                self.chat("Hi", max_tokens=1, **extra)
            self.assert_error_shape(caught.exception, 400, param)
        orphan = [{"role": "user", "content": "Hi"}, {"role": "tool", "tool_call_id": "call_nope", "content": "42"}]
        with self.assertRaises(openai.BadRequestError) as caught:
            self.client.chat.completions.create(model=self.server.model, messages=orphan, max_tokens=1)
        self.assert_error_shape(caught.exception, 400, "messages[1].tool_call_id")
        bad_arguments = [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{city"}}]},
        ]
        with self.assertRaises(openai.BadRequestError) as caught:
            self.client.chat.completions.create(model=self.server.model, messages=bad_arguments, max_tokens=1)
        self.assert_error_shape(caught.exception, 400, "messages[1].tool_calls[0].function.arguments")
        self.assert_still_serving()


# A Qwen3-style template that opens `<think>` in its generation prompt unless thinking is off.
THINKING_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% else %}<think>\n{% endif %}{% endif %}"
)


class TinyQwen3Thinking(ServerTest):
    """`confab serve` on a copy of the tiny Qwen3 wearing THINKING_TEMPLATE (no tests of its own)."""

    @classmethod
    def setUpClass(cls):
        folder = pathlib.Path(tempfile.mkdtemp(prefix="confab-qwen3-thinking-"))
        cls.folder = folder
        shutil.copytree(ROOT / "tests" / "reference" / "fixtures" / "tiny" / "qwen3", folder / "model")
        config = json.loads((folder / "model" / "tokenizer_config.json").read_text())
        config["chat_template"] = THINKING_TEMPLATE
        (folder / "model" / "tokenizer_config.json").write_text(json.dumps(config))
        cls.server = Server("--model", str(folder / "model"))
        cls.client = openai.OpenAI(base_url=cls.server.base_url, api_key="unused", max_retries=0, timeout=120)

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.folder, ignore_errors=True)


class TinyQwen3Reasoning(TinyQwen3Thinking):
    """Its random words fall in the reasoning channel unless the request turns thinking off."""

    def test_reasoning_is_apart_and_can_be_turned_off(self):
        thinking = self.chat("Hi", max_tokens=6)
        message = thinking.choices[0].message
        self.assertTrue(message.reasoning_content, "the reply opened in the reasoning block")
        streamed = list(self.chat("Hi", max_tokens=6, stream=True))
        reasoning = "".join(getattr(c.choices[0].delta, "reasoning_content", None) or "" for c in streamed if c.choices)
        self.assertEqual(reasoning, message.reasoning_content)
        self.assertEqual("".join(c.choices[0].delta.content or "" for c in streamed if c.choices), message.content or "")

        off = self.chat("Hi", max_tokens=6, extra_body={"chat_template_kwargs": {"enable_thinking": False}})
        self.assertFalse(getattr(off.choices[0].message, "reasoning_content", None))
        self.assertTrue(off.choices[0].message.content)
        effort = self.chat("Hi", max_tokens=6, reasoning_effort="none")
        self.assertEqual(effort.usage.prompt_tokens, off.usage.prompt_tokens)


TINY = ROOT / "tests" / "reference" / "fixtures" / "tiny"


class TinyLlamaDraft(ServerTest):
    """`--draft-model`: tiny SmolLM3 (the same vocabulary, other weights) drafts for tiny Llama
    when a request asks for `"speculative": "draft_model"`; the greedy reply is the plain one,
    and `usage.speculative` says what was accepted. A draft with another vocabulary stops the
    server before it starts, naming the mismatch."""

    @classmethod
    def setUpClass(cls):
        cls.server = Server("--model", str(TINY / "llama"), "--draft-model", str(TINY / "smollm3"))
        cls.client = openai.OpenAI(base_url=cls.server.base_url, api_key="unused", max_retries=0, timeout=120)

    def complete(self, **extra):
        return self.client.completions.create(
            model=self.server.model, prompt="one two three one two three one two", max_tokens=24, temperature=0, extra_body=extra,
        )

    def test_the_draft_model_gives_the_plain_greedy_reply_and_says_what_it_accepted(self):
        plain = self.complete()
        drafted = self.complete(speculative="draft_model")
        self.assertEqual(drafted.choices[0].text, plain.choices[0].text)
        stats = drafted.usage.model_extra["speculative"]
        self.assertGreater(stats["proposed"], 0)
        self.assertLessEqual(stats["accepted"], stats["proposed"])
        self.assertGreaterEqual(stats["tokens_per_step"], 1.0)
        self.assertNotIn("speculative", plain.usage.model_extra or {})

    def test_a_draft_with_another_vocabulary_stops_the_server_saying_why(self):
        run = subprocess.run(
            [str(CONFAB), "serve", "--port", "0", "--model", str(TINY / "llama"), "--draft-model", str(TINY / "qwen3")],
            capture_output=True, text=True, timeout=120,
        )
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("its vocabulary differs", run.stderr)


class TinyGemma4(ServerTest):
    """The tiny random Gemma 4 reads images and audio; its words are noise, its token counts are not."""

    @classmethod
    def setUpClass(cls):
        cls.server = Server("--model", str(GEMMA4))
        cls.client = openai.OpenAI(base_url=cls.server.base_url, api_key="unused", max_retries=0, timeout=120)

    def test_image_request(self):
        png = base64.b64encode((GEMMA4 / "media" / "gradient.png").read_bytes()).decode()
        text_only = self.chat("What is this?", max_tokens=2)
        with_image = self.chat(
            [{"type": "text", "text": "What is this?"}, {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}}],
            max_tokens=2,
        )
        self.assertEqual(with_image.usage.completion_tokens, 2)
        # The image's soft tokens (63 for this fixture, see media_reference.json) and its markers.
        self.assertGreaterEqual(with_image.usage.prompt_tokens - text_only.usage.prompt_tokens, 63)

    def test_audio_request(self):
        wav = base64.b64encode((GEMMA4 / "media" / "chirp.wav").read_bytes()).decode()
        reply = self.chat([{"type": "input_audio", "input_audio": {"data": wav, "format": "wav"}}, {"type": "text", "text": "What is this?"}], max_tokens=2)
        self.assertEqual(reply.usage.completion_tokens, 2)
        self.assertGreaterEqual(reply.usage.prompt_tokens, 25)

    def test_an_image_that_is_not_one(self):
        junk = base64.b64encode(b"not an image at all").decode()
        with self.assertRaises(openai.BadRequestError) as caught:
            self.chat([{"type": "image_url", "image_url": {"url": f"data:image/png;base64,{junk}"}}])
        self.assert_error_shape(caught.exception, 400)
        self.assert_still_serving()


class TinyDiffusionGemma(ServerTest):
    """The tiny random DiffusionGemma writes canvases of 8 tokens by denoising: a stream gives a
    chunk per finished canvas, not one per token, and says what the whole reply says."""

    CANVAS = json.loads((DIFFUSION_GEMMA / "config.json").read_text())["canvas_length"]

    @classmethod
    def setUpClass(cls):
        cls.server = Server("--model", str(DIFFUSION_GEMMA))
        cls.client = openai.OpenAI(base_url=cls.server.base_url, api_key="unused", max_retries=0, timeout=120)

    def test_a_chat_streams_a_chunk_per_canvas(self):
        ask = dict(max_tokens=3 * self.CANVAS, seed=7)
        whole = self.chat("Tell me a story.", **ask)
        tokens = whole.usage.completion_tokens
        self.assertGreater(tokens, 0)
        chunks = list(self.chat("Tell me a story.", stream=True, stream_options={"include_usage": True}, **ask))
        texts = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
        self.assertEqual("".join(texts), whole.choices[0].message.content or "", "the same seed, the same reply")
        canvases = -(-tokens // self.CANVAS)
        self.assertLessEqual(len(texts), canvases, f"at most a chunk per canvas: {texts}")
        self.assertGreaterEqual(len(texts), 1)
        self.assertEqual(chunks[-1].usage.completion_tokens, tokens)

    def test_a_completion_streams_a_chunk_per_canvas(self):
        ask = dict(model=self.server.model, prompt="Once upon a time", max_tokens=2 * self.CANVAS, seed=3)
        whole = self.client.completions.create(**ask)
        streamed = [c.choices[0].text for c in self.client.completions.create(stream=True, **ask) if c.choices and c.choices[0].text]
        self.assertEqual("".join(streamed), whole.choices[0].text)
        self.assertLessEqual(len(streamed), -(-whole.usage.completion_tokens // self.CANVAS), streamed)

    def test_a_grammar_is_refused_saying_why(self):
        with self.assertRaises(openai.BadRequestError) as caught:
            self.chat("Hi", response_format={"type": "json_object"})
        self.assert_error_shape(caught.exception, 400)
        self.assertIn("denoising", caught.exception.response.json()["error"]["message"])
        self.assert_still_serving()


if __name__ == "__main__":
    unittest.main()
