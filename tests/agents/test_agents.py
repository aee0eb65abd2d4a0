"""The real coding agents against `confab serve`, through the recording proxy (proxy.py): Claude
Code (`claude -p`, stream-json, then `--resume`) and Codex (`codex exec` with its default
configuration but the provider, then `codex exec resume --last`), both as installed from npm by
scripts/setup.sh (tests/agents/package.json), on the tiny long-context checkpoint
(checkpoint.py). Fails on any request the server refuses (4xx), and where the resumed turn's
first request reads less than 95% of the earlier turn's prompt from the prefix cache.

Each first turn is a tool round trip. The random model never calls a tool, so the proxy answers
the turn's requests (after confab serve has served them) with scripted calls (scripted.py):
Claude Code's `ToolSearch` loading a deferred tool, then its `Read` of the work folder's
README.md, each after a signed thinking block; Codex's `exec_command` running `cat README.md`
after a reasoning item with `encrypted_content`. The agent runs the tool and sends its result
back: the tool search's as `tool_reference` blocks, the file's text, each with the agent's replay
of the scripted turn (a signature and encrypted reasoning Confab never issued). `confab serve`
serves each, reading ≥95% of the request before's prompt from the cache.

The weights are random and never end a reply, so the proxy caps each reply's length (the one
change made to what the clients send); Codex sends no limit at all. The clients' setup is the
one docs/server.md gives.

Run: .deps/server/venv/bin/python -m unittest discover -s tests/agents -p test_agents.py -v
"""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "server"))
sys.path.insert(0, str(HERE))
import checkpoint  # noqa: E402
import scripted  # noqa: E402
from proxy import Proxy  # noqa: E402
from test_openai import Server  # noqa: E402

BIN = HERE / "node_modules" / ".bin"
CAP = 16
SHARE = 0.95
# What the scripted tool call reads: the follow-up must carry it back.
README = "The walrus keeps a ledger of the tides, one line per moon.\n"
# One of the tools Claude Code defers (`defer_loading`) until its ToolSearch loads them.
DEFERRED = "WebFetch"


def cached_and_prompt(exchange: dict, answer: str = "response") -> tuple[int, int]:
    """The prompt's tokens read from the cache and all of them, from a streamed answer (`served`:
    confab serve's answer to a request the proxy answered with a script)."""
    for line in exchange[answer].splitlines():
        if not line.startswith("data:"):
            continue
        event = json.loads(line[5:])
        if event.get("type") == "message_start":
            usage = event["message"]["usage"]
            cached = usage.get("cache_read_input_tokens") or 0
            return cached, usage["input_tokens"] + cached
        if event.get("type") in ("response.completed", "response.incomplete"):
            usage = event["response"]["usage"]
            return usage["input_tokens_details"]["cached_tokens"], usage["input_tokens"]
    raise AssertionError(f"no usage in the answer to {exchange['path']}")


def final_response(exchange: dict) -> dict:
    """The response object of a streamed Responses answer's last event."""
    for line in reversed(exchange["response"].splitlines()):
        if line.startswith("data:"):
            event = json.loads(line[5:])
            if event.get("type") in ("response.completed", "response.incomplete", "response.failed"):
                return event["response"]
    raise AssertionError(f"no final response event in the answer to {exchange['path']}")


class Agents(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not (BIN / "claude").exists() or not (BIN / "codex").exists():
            raise unittest.SkipTest(f"the agents are not installed in {HERE / 'node_modules'}; run scripts/setup.sh")
        cls.folder = pathlib.Path(tempfile.mkdtemp(prefix="confab-agents-"))
        try:
            cls.server = Server("--model", str(checkpoint.make(cls.folder)))
        except BaseException:  # a skip too (confab not built): tearDownClass does not run
            shutil.rmtree(cls.folder, ignore_errors=True)
            raise
        cls.port = int(cls.server.base_url.rsplit(":", 1)[1].split("/")[0])

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        shutil.rmtree(cls.folder, ignore_errors=True)
        assert code == 0, f"confab serve exited with {code} on Ctrl-C"

    def setUp(self):
        self.record = self.folder / f"{self._testMethodName}.jsonl"
        self.proxy = Proxy(self.port, str(self.record), cap=CAP)
        self.work = self.folder / self._testMethodName
        self.work.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=self.work, check=True)
        (self.work / "README.md").write_text(README)

    def tearDown(self):
        self.proxy.stop()

    def run_agent(self, argv: list[str], env: dict) -> subprocess.CompletedProcess:
        env = dict(os.environ, HOME=str(self.folder / "home"), PATH=f"{BIN}:{os.environ['PATH']}", **env)
        return subprocess.run(argv, cwd=self.work, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)

    def check_exchanges(self) -> list[dict]:
        """Every exchange so far, none refused."""
        exchanges = self.proxy.recorder.exchanges
        refused = self.proxy.recorder.refused()
        self.assertFalse(refused, "\n".join(f"{e['status']} {e['path']}: {e.get('served', e['response'])[:400]}" for e in refused))
        return exchanges

    def scripted_and_follow_ups(self, exchanges: list[dict], is_turn, count: int) -> list[tuple[dict, dict]]:
        """Each of the `count` scripted exchanges and the turn request after it (which carries
        the tool's result; served by confab serve, answered with the next script or its own)."""
        at = [i for i, e in enumerate(exchanges) if e["scripted"]]
        self.assertEqual(len(at), count, "the proxy scripted another number of replies")
        pairs = []
        for i in at:
            follow_up = next((e for e in exchanges[i + 1:] if is_turn(e)), None)
            self.assertIsNotNone(follow_up, f"the agent sent nothing after the scripted call in {exchanges[i]['path']}")
            self.assertEqual(follow_up["status"], 200, follow_up.get("served", follow_up["response"])[:400])
            pairs.append((exchanges[i], follow_up))
        self.assertFalse(pairs[-1][1]["scripted"], "the last tool result was not answered by confab serve")
        return pairs

    def assert_cache_share(self, earlier: dict, later: dict, what: str):
        """`later` reads at least 95% of `earlier`'s prompt from the prefix cache (a scripted
        exchange's prompt as confab serve's answer to it gives it)."""
        served = lambda e: "served" if e["scripted"] else "response"  # noqa: E731
        _, prompt = cached_and_prompt(earlier, served(earlier))
        cached, later_prompt = cached_and_prompt(later, served(later))
        print(f"\n{what} read {cached} of {later_prompt} prompt tokens from the cache "
              f"(the request before had {prompt}; {cached / prompt:.1%})", file=sys.stderr)
        self.assertGreaterEqual(cached, SHARE * prompt)

    def test_claude_code(self):
        env = {
            # As docs/server.md gives it.
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{self.proxy.port}",
            "ANTHROPIC_API_KEY": "unused",
            "CLAUDE_CONFIG_DIR": str(self.folder / "claude"),
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }
        model = self.server.model
        turn = lambda e: e["path"].startswith("/v1/messages") and "count_tokens" not in e["path"]  # noqa: E731
        signature, read = scripted.opaque("Eq"), {"file_path": str(self.work / "README.md")}
        # Claude Code's tool search loads a deferred tool (a `tool_reference` in its result),
        # then Read reads the file.
        calls = [("ToolSearch", {"query": f"select:{DEFERRED}"}, "toolu_01ScriptedSearch"), ("Read", read, "toolu_01ScriptedRead")]
        steps = list(calls)

        def script(path: str, payload: dict) -> bytes | None:
            # The turn's requests (they offer Read), not a side request such as a title's.
            if steps and turn({"path": path}) and any(t.get("name") == "Read" for t in payload.get("tools") or []):
                name, tool_input, tool_id = steps.pop(0)
                return scripted.messages_tool_use(payload["model"], name, tool_input, tool_id, signature)
            return None

        self.proxy.recorder.script = script
        first = self.run_agent(
            ["claude", "-p", "What does README.md say?", "--model", model, "--output-format", "stream-json", "--verbose"], env
        )
        lines = [json.loads(line) for line in first.stdout.splitlines() if line.startswith("{")]
        session = next((line["session_id"] for line in lines if line.get("session_id")), None)
        self.assertTrue(session, first.stdout[-2000:] + first.stderr[-2000:])
        turn_one = len(self.proxy.recorder.exchanges)
        self.run_agent(["claude", "-p", "And again.", "--resume", session, "--model", model, "--output-format", "stream-json", "--verbose"], env)
        exchanges = self.check_exchanges()

        # The round trips: Claude Code ran each tool and sent its result back, with the
        # scripted turn (its signed thinking block) before it.
        pairs = self.scripted_and_follow_ups(exchanges, turn, len(calls))
        for (name, tool_input, tool_id), (scripted_request, follow_up) in zip(calls, pairs):
            messages = follow_up["request"]["messages"]
            blocks = [(m["role"], b) for m in messages if isinstance(m["content"], list) for b in m["content"]]
            replayed = [b for role, b in blocks if role == "assistant" and b["type"] in ("thinking", "tool_use")]
            self.assertIn(signature, [b.get("signature") for b in replayed], "the signed thinking block was not sent back")
            self.assertIn(tool_id, [b.get("id") for b in replayed])
            results = [b for role, b in blocks if role == "user" and b["type"] == "tool_result" and b["tool_use_id"] == tool_id]
            self.assertEqual(len(results), 1, f"no tool_result answers the scripted {name}")
            content = results[0]["content"]
            if name == "ToolSearch":
                # The deferred tool, loaded (Confab writes its definition there; messages::request's tests).
                self.assertIn({"type": "tool_reference", "tool_name": DEFERRED}, content, content)
                shown = content
            else:
                shown = content if isinstance(content, str) else "".join(part.get("text", "") for part in content)
                self.assertIn(README.strip(), shown, f"the tool_result does not carry the file's text: {shown!r}")
            print(f"\nClaude Code: scripted {name}({json.dumps(tool_input)}); the next request carried tool_result {shown!r}",
                  file=sys.stderr)
            self.assert_cache_share(scripted_request, follow_up, f"Claude Code: {name}'s result's request")

        earlier = [e for e in exchanges[:turn_one] if turn(e)]
        resumed = [e for e in exchanges[turn_one:] if turn(e)]
        self.assertTrue(resumed, "the resumed turn sent nothing")
        self.assert_cache_share(earlier[-1], resumed[0], "Claude Code: the resumed turn")

    def test_codex(self):
        home = self.folder / "codex"
        home.mkdir()
        # As docs/server.md gives it: the provider, nothing else changed from the defaults.
        (home / "config.toml").write_text(
            f'model = "{self.server.model}"\n'
            'model_provider = "confab"\n\n'
            "[model_providers.confab]\n"
            'name = "Confab"\n'
            f'base_url = "http://127.0.0.1:{self.proxy.port}/v1"\n'
            'wire_api = "responses"\n'
        )
        # Codex will not put its sandbox's helper under the temporary directory, where this
        # CODEX_HOME is (a user's ~/.codex is not): the temporary directory is moved into the
        # test's folder, so that the scripted command runs in Codex's default read-only sandbox.
        tmp = self.folder / "codex-tmp"
        tmp.mkdir()
        env = {"CODEX_HOME": str(home), "TMPDIR": str(tmp)}
        turn = lambda e: e["path"] == "/v1/responses"  # noqa: E731
        call_id, encrypted, command = "call_01ScriptedCat", scripted.opaque("gAAAAAB"), {"cmd": "cat README.md"}
        steps = [command]  # one scripted reply: the call's output goes to confab serve

        def script(path: str, payload: dict) -> bytes | None:
            if steps and turn({"path": path}) and any(t.get("name") == "exec_command" for t in payload.get("tools") or []):
                return scripted.responses_function_call(payload["model"], "exec_command", steps.pop(), call_id, encrypted)
            return None

        self.proxy.recorder.script = script
        # Codex exits 1 on a reply the cap cut short ("Incomplete response returned"): what is
        # checked is that nothing was refused and the resumed turn was served from the cache.
        first = self.run_agent(["codex", "exec", "What does README.md say?"], env)
        self.assertNotIn("invalid_request_error", first.stderr)
        turn_one = len(self.proxy.recorder.exchanges)
        second = self.run_agent(["codex", "exec", "resume", "--last", "And again."], env)
        self.assertNotIn("invalid_request_error", second.stderr)
        exchanges = self.check_exchanges()

        # The round trip: Codex ran the command and sent its output back, after the reasoning
        # item it replays as received (its encrypted_content is OpenAI's, never Confab's).
        [(scripted_request, follow_up)] = self.scripted_and_follow_ups(exchanges, turn, 1)
        items = follow_up["request"]["input"]
        reasoning = [i for i in items if i.get("type") == "reasoning"]
        self.assertIn(encrypted, [i.get("encrypted_content") for i in reasoning], "the reasoning item was not sent back")
        self.assertIn(call_id, [i.get("call_id") for i in items if i.get("type") == "function_call"])
        outputs = [i for i in items if i.get("type") == "function_call_output" and i.get("call_id") == call_id]
        self.assertEqual(len(outputs), 1, "no function_call_output answers the scripted call")
        output = outputs[0]["output"]
        text = output if isinstance(output, str) else json.dumps(output)
        # Codex runs it in its default read-only sandbox (bubblewrap): its failure shows here.
        self.assertIn(README.strip(), text, f"the function_call_output does not carry the command's output: {text!r}")
        # Confab cannot read OpenAI's encryption: the item is read as its summary, and the log says so.
        log = (self.server.home / "stderr.log").read_text()
        self.assertIn("reasoning encrypted by another server", log)
        # Codex's `web_search` is left out of the prompt, and the response says so.
        final = final_response(follow_up)
        self.assertIn("web_search", final["metadata"].get("confab_tools_left_out", ""))
        print(f"\nCodex: scripted reasoning + exec_command {command}; the follow-up carried function_call_output {text!r}",
              file=sys.stderr)
        self.assert_cache_share(scripted_request, follow_up, "Codex: the tool output's request")

        self.assertGreater(len(exchanges), turn_one, "the resumed turn sent nothing")
        self.assert_cache_share(exchanges[turn_one - 1], exchanges[turn_one], "Codex: the resumed turn")


if __name__ == "__main__":
    unittest.main()
