"""The real coding agents against `confab serve`, through the recording proxy (proxy.py): Claude
Code (`claude -p`, stream-json, then `--resume`) and Codex (`codex exec` with its default
configuration but the provider, then `codex exec resume --last`), both as installed from npm by
scripts/setup.sh (tests/agents/package.json), on the tiny long-context checkpoint
(checkpoint.py). Fails on any request the server refuses (4xx), and where the resumed turn's
first request reads less than 95% of the earlier turn's prompt from the prefix cache.

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
from proxy import Proxy  # noqa: E402
from test_openai import Server  # noqa: E402

BIN = HERE / "node_modules" / ".bin"
CAP = 16
SHARE = 0.95


def cached_and_prompt(exchange: dict) -> tuple[int, int]:
    """The prompt's tokens and those read from the cache, from a streamed answer."""
    for line in exchange["response"].splitlines():
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


class Agents(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not (BIN / "claude").exists() or not (BIN / "codex").exists():
            raise unittest.SkipTest(f"the agents are not installed in {HERE / 'node_modules'}; run scripts/setup.sh")
        cls.folder = pathlib.Path(tempfile.mkdtemp(prefix="confab-agents-"))
        cls.server = Server("--model", str(checkpoint.make(cls.folder)))
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

    def tearDown(self):
        self.proxy.stop()

    def run_agent(self, argv: list[str], env: dict) -> subprocess.CompletedProcess:
        env = dict(os.environ, HOME=str(self.folder / "home"), PATH=f"{BIN}:{os.environ['PATH']}", **env)
        return subprocess.run(argv, cwd=self.work, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)

    def check_exchanges(self, turns: list[int]) -> list[dict]:
        """No refusal; the first request of each resumed turn reads ≥95% of the turn before it."""
        exchanges = self.proxy.recorder.exchanges
        refused = self.proxy.recorder.refused()
        self.assertFalse(refused, "\n".join(f"{e['status']} {e['path']}: {e['response'][:400]}" for e in refused))
        return exchanges

    def assert_cache_share(self, earlier: dict, resumed: dict, what: str):
        _, prompt = cached_and_prompt(earlier)
        cached, resumed_prompt = cached_and_prompt(resumed)
        print(f"\n{what}: resumed turn read {cached} of {resumed_prompt} prompt tokens from the cache "
              f"(the turn before had {prompt}; {cached / prompt:.1%})", file=sys.stderr)
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
        first = self.run_agent(["claude", "-p", "Say hi.", "--model", model, "--output-format", "stream-json", "--verbose"], env)
        lines = [json.loads(line) for line in first.stdout.splitlines() if line.startswith("{")]
        session = next((line["session_id"] for line in lines if line.get("session_id")), None)
        self.assertTrue(session, first.stdout[-2000:] + first.stderr[-2000:])
        turn_one = len(self.proxy.recorder.exchanges)
        self.run_agent(["claude", "-p", "And again.", "--resume", session, "--model", model, "--output-format", "stream-json", "--verbose"], env)
        exchanges = self.check_exchanges([])
        turn = lambda e: e["path"].startswith("/v1/messages") and "count_tokens" not in e["path"]  # noqa: E731
        earlier = [e for e in exchanges[:turn_one] if turn(e)]
        resumed = [e for e in exchanges[turn_one:] if turn(e)]
        self.assertTrue(earlier and resumed, "a turn sent nothing")
        self.assert_cache_share(earlier[-1], resumed[0], "Claude Code")

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
        env = {"CODEX_HOME": str(home)}
        # Codex exits 1 on a reply the cap cut short ("Incomplete response returned"): what is
        # checked is that nothing was refused and the resumed turn was served from the cache.
        first = self.run_agent(["codex", "exec", "Say hi."], env)
        self.assertNotIn("invalid_request_error", first.stderr)
        turn_one = len(self.proxy.recorder.exchanges)
        second = self.run_agent(["codex", "exec", "resume", "--last", "And again."], env)
        self.assertNotIn("invalid_request_error", second.stderr)
        exchanges = self.check_exchanges([])
        self.assertGreater(len(exchanges), turn_one, "the resumed turn sent nothing")
        self.assert_cache_share(exchanges[turn_one - 1], exchanges[turn_one], "Codex")


if __name__ == "__main__":
    unittest.main()
