"""Soak: `confab serve` under mixed traffic from the real clients for a bounded time, while the app,
on the same data folder, chats and indexes documents. Looks for leaks, hangs and broken replies.

    .deps/server/venv/bin/python bench/soak.py                  # 30 minutes, a sample a minute
    .deps/server/venv/bin/python bench/soak.py --minutes 10 --sample-seconds 30
    .deps/server/venv/bin/python bench/soak.py --no-app        # the server alone

Binaries: --confab / --app (default $CARGO_TARGET_DIR or target, /debug/confab and confab-app).
The app needs what tests/e2e need (scripts/setup.sh: tauri-driver, the e2e venv, Xvfb; the app
built with ui/dist); without an X display the app runs under xvfb-run.

What shares what: one CONFAB_HOME for both. Its confab.db (SQLite, WAL) is written by the app
(conversations, messages, the documents' index) and by the server (the Responses API keeps its
replies there), at once. The models folder is shared (the default model and a tiny embedding
model); the server also serves a second copy of the default model and a tiny Qwen3 from a
`--folder`, loaded on demand and unloaded after `--keep-alive`, so the soak switches models.

Traffic: --clients threads (default 4), each picking a request at random: OpenAI chat
completions (whole, streamed, with a tool and tool_choice, with a json_schema response_format),
the Responses API (whole and streamed, kept), Anthropic Messages (the SDK, whole and streamed),
Ollama /api/chat and /api/generate (the `ollama` package), embeddings (OpenAI and Ollama),
cancellations mid-stream (closed after a few chunks), prompts longer than the context, malformed
requests (bad JSON, wrong types) and requests to the other models. Replies are a few tokens.
The app sends a message every --app-chat-seconds (60). The conversation caches get
PREFIX_CACHE_MIB, so that they are full early and do not hide other growth.

Every interval it samples, for the server and the app: resident memory (VmRSS), open file
handles (/proc/<pid>/fd), threads; the database's files (confab.db, -wal, -shm); and per kind of
request the latency percentiles and the counts of complete, cleanly refused and broken replies.

Passes when:
  - every reply is complete or cleanly refused: a 4xx/5xx with an error body, or a stream that
    ends in an error event. Broken: a hang (past --request-timeout), a stream that ends without
    its end event, a reset connection, a malformed request accepted, a good one refused for a
    reason other than load. The app's chat replies must all end `complete`, and each document's
    reply must cite it (a 40-page PDF indexed before the idle baseline, a 300-page one a third
    into the soak);
  - resident memory levels off: the highest sample of the last third is within
    max(RSS_GROWTH_SHARE, RSS_GROWTH_MIB) of the highest of the middle third (the first third
    is warm-up: allocator pools, the prefix cache, the models loaded on demand);
  - handles and threads go back: idle after the traffic (the models loaded on demand unloaded),
    each is at most its idle baseline (taken the same way after a warm-up round) plus
    IDLE_SLACK;
  - confab.db passes `PRAGMA integrity_check` once the server and the app have stopped, and
    the server exits 0 on Ctrl-C.
Writes bench/results/soak-<time>.md (tables), .json (every sample and request, and each
interval's p50/p95/p99 per kind) and .svg (chart; matplotlib is not in the server venv);
exits 1 on a failure.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import queue
import random
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

import anthropic
import httpx
import ollama
import openai

ROOT = pathlib.Path(__file__).resolve().parents[1]
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
DEPS = pathlib.Path(os.environ.get("CONFAB_DEPS_DIR") or ROOT / ".deps")
E2E_PYTHON = DEPS / "e2e" / "venv" / "bin" / "python"
TINY = ROOT / "tests" / "reference" / "fixtures" / "tiny"
# Made by tests/reference/make_long_documents.py: 40 pages (indexed before the idle baseline, so
# that the app's embedding model is loaded in it) and 300 pages (indexed during the soak).
DOCUMENTS = ROOT / "tests" / "reference" / "fixtures" / "documents"
WARM_DOCUMENT, DOCUMENT = "long_report.pdf", "many_pages.pdf"
RESULTS = ROOT / "bench" / "results"

EMBEDDER = "qwen3-embedding-tiny"
SECOND_COPY = "bravo"  # a second name for the default model's file
TINY_CHAT = "qwen3-tiny"
KEEP_ALIVE_S = 10
# The conversation caches' memory (the server's default is 2 GiB): small, so that they are full
# early in the soak and what grows after is something else.
PREFIX_CACHE_MIB = 128
# Idle long enough for the models loaded on demand to unload and tokio's idle blocking threads
# (10 s) to end.
SETTLE_S = KEEP_ALIVE_S + 15
RSS_GROWTH_SHARE = 0.10
RSS_GROWTH_MIB = 32
IDLE_SLACK = {"fds": 2, "threads": 2}

sys.path.insert(0, str(ROOT / "tests" / "server"))
from test_openai import default_model  # noqa: E402

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city today.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 12}, "age": {"type": "integer", "minimum": 0, "maximum": 120}},
    "required": ["name", "age"],
    "additionalProperties": False,
}
PROMPTS = ["Hi", "What is 2+2?", "Name a city.", "Say something short.", "Tell me a colour."]


class Broken(Exception):
    """A reply that is neither complete nor cleanly refused."""


class Refused(Exception):
    """A clean refusal (an error status with an error body, or a stream's error event)."""


# ---------------------------------------------------------------------------------------------
# The requests: each returns "complete" or "cancelled", raises Refused or Broken.


@dataclass
class Target:
    base: str  # http://127.0.0.1:port
    model: str
    context: int
    openai: openai.OpenAI = field(init=False)
    anthropic: anthropic.Anthropic = field(init=False)
    ollama: ollama.Client = field(init=False)
    http: httpx.Client = field(init=False)

    def __post_init__(self):
        timeout = REQUEST_TIMEOUT
        self.openai = openai.OpenAI(base_url=self.base + "/v1", api_key="unused", max_retries=0, timeout=timeout)
        self.anthropic = anthropic.Anthropic(base_url=self.base, api_key="unused", max_retries=0, timeout=timeout)
        self.ollama = ollama.Client(host=self.base, timeout=timeout)
        self.http = httpx.Client(base_url=self.base, timeout=timeout)

    def close(self):
        """Closes the pooled keep-alive connections (else the server's idle handles count them)."""
        self.openai.close()
        self.anthropic.close()
        self.ollama.close()
        self.http.close()


REQUEST_TIMEOUT = 120.0


def user(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


def openai_chat(t: Target, rng: random.Random) -> str:
    reply = t.openai.chat.completions.create(model=t.model, messages=user(rng.choice(PROMPTS)), max_tokens=4)
    if not reply.choices or reply.choices[0].finish_reason is None:
        raise Broken(f"no finish_reason: {reply}")
    return "complete"


def openai_chat_stream(t: Target, rng: random.Random) -> str:
    stream = t.openai.chat.completions.create(
        model=t.model, messages=user(rng.choice(PROMPTS)), max_tokens=6, stream=True, stream_options={"include_usage": True}
    )
    ends = [c.choices[0].finish_reason for c in stream if c.choices and c.choices[0].finish_reason]
    if ends != ["length"] and ends != ["stop"]:
        raise Broken(f"stream ended without one finish_reason: {ends}")
    return "complete"


def openai_tools(t: Target, rng: random.Random) -> str:
    reply = t.openai.chat.completions.create(
        model=t.model, messages=user("What is the weather in Paris?"), max_tokens=40, tools=[WEATHER],
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
    )
    choice = reply.choices[0]
    if choice.finish_reason == "tool_calls":
        json.loads(choice.message.tool_calls[0].function.arguments)
    elif choice.finish_reason != "length":  # a call cut at max_tokens is still a complete reply
        raise Broken(f"finish_reason {choice.finish_reason}")
    return "complete"


def openai_json_schema(t: Target, rng: random.Random) -> str:
    reply = t.openai.chat.completions.create(
        model=t.model, messages=user("Someone as JSON."), max_tokens=40,
        response_format={"type": "json_schema", "json_schema": {"name": "person", "schema": PERSON, "strict": True}},
    )
    if reply.choices[0].finish_reason == "stop":
        json.loads(reply.choices[0].message.content)
    return "complete"


def responses(t: Target, rng: random.Random) -> str:
    reply = t.openai.responses.create(model=t.model, input=rng.choice(PROMPTS), max_output_tokens=4, store=True)
    if reply.status not in ("completed", "incomplete"):
        raise Broken(f"status {reply.status}")
    return "complete"


def responses_stream(t: Target, rng: random.Random) -> str:
    kinds = [e.type for e in t.openai.responses.create(model=t.model, input=rng.choice(PROMPTS), max_output_tokens=6, stream=True)]
    if kinds[-1:] in (["response.failed"], ["error"]):
        raise Refused(kinds[-1])
    if kinds[-1:] not in (["response.completed"], ["response.incomplete"]):
        raise Broken(f"stream ended with {kinds[-3:]}")
    return "complete"


def anthropic_messages(t: Target, rng: random.Random) -> str:
    reply = t.anthropic.messages.create(model=t.model, max_tokens=4, messages=user(rng.choice(PROMPTS)))
    if reply.stop_reason is None:
        raise Broken("no stop_reason")
    return "complete"


def anthropic_stream(t: Target, rng: random.Random) -> str:
    kinds = [e.type for e in t.anthropic.messages.create(model=t.model, max_tokens=6, messages=user(rng.choice(PROMPTS)), stream=True)]
    if kinds[-1:] != ["message_stop"]:
        raise Broken(f"stream ended with {kinds[-3:]}")
    return "complete"


def ollama_chat(t: Target, rng: random.Random) -> str:
    if rng.random() < 0.5:
        reply = t.ollama.chat(t.model, messages=user(rng.choice(PROMPTS)), options={"num_predict": 4})
        if not reply.done:
            raise Broken("done is false")
    else:
        parts = list(t.ollama.chat(t.model, messages=user(rng.choice(PROMPTS)), options={"num_predict": 6}, stream=True))
        if not parts or not parts[-1].done or any(p.done for p in parts[:-1]):
            raise Broken(f"stream's done flags: {[p.done for p in parts]}")
    return "complete"


def ollama_generate(t: Target, rng: random.Random) -> str:
    parts = list(t.ollama.generate(t.model, rng.choice(PROMPTS), options={"num_predict": 6}, stream=True))
    if not parts or not parts[-1].done:
        raise Broken("stream ended without done")
    return "complete"


def embeddings(t: Target, rng: random.Random) -> str:
    if rng.random() < 0.5:
        answer = t.openai.embeddings.create(model=EMBEDDER, input=[rng.choice(PROMPTS), "a second input"], encoding_format="float")
        if len(answer.data) != 2:
            raise Broken(f"{len(answer.data)} vectors for 2 inputs")
    else:
        answer = t.ollama.embed(EMBEDDER, input=rng.choice(PROMPTS))
        if len(answer.embeddings) != 1:
            raise Broken(f"{len(answer.embeddings)} vectors for 1 input")
    return "complete"


def cancel_mid_stream(t: Target, rng: random.Random) -> str:
    """Closes the connection after a few chunks of a long reply (the server must cancel it)."""
    if rng.random() < 0.5:
        stream = t.openai.chat.completions.create(model=t.model, messages=user("Count to a hundred."), max_tokens=400, stream=True)
    else:
        stream = t.anthropic.messages.create(model=t.model, max_tokens=400, messages=user("Count to a hundred."), stream=True)
    received = 0
    for _ in stream:
        received += 1
        if received == 3:
            break
    stream.close()
    if received < 3:
        raise Broken(f"the stream ended after {received} chunks")
    return "cancelled"


def over_long(t: Target, rng: random.Random) -> str:
    """A prompt longer than the context: must be refused, not cut or hung."""
    text = "word " * (t.context + 500)
    if rng.random() < 0.5:
        t.openai.chat.completions.create(model=t.model, messages=user(text), max_tokens=4)
    else:
        t.anthropic.messages.create(model=t.model, max_tokens=4, messages=user(text))
    raise Broken("a prompt longer than the context was answered")


MALFORMED = [
    ("/v1/chat/completions", b'{"model": "m", "messages": ['),
    ("/v1/chat/completions", json.dumps({"model": "MODEL", "messages": "Hi", "max_tokens": 2}).encode()),
    ("/v1/chat/completions", json.dumps({"model": "MODEL", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": "two"}).encode()),
    ("/v1/responses", json.dumps({"model": "MODEL", "input": 42}).encode()),
    ("/v1/messages", json.dumps({"model": "MODEL", "max_tokens": "four", "messages": [{"role": "user", "content": "Hi"}]}).encode()),
    ("/v1/messages", b"{not json"),
    ("/api/chat", b"{not json"),
    ("/api/generate", json.dumps({"model": "MODEL", "prompt": ["Hi"]}).encode()),
    ("/v1/embeddings", json.dumps({"model": EMBEDDER, "input": {"text": "x"}}).encode()),
]


def malformed(t: Target, rng: random.Random) -> str:
    path, body = rng.choice(MALFORMED)
    answer = t.http.post(path, content=body.replace(b"MODEL", t.model.encode()), headers={"Content-Type": "application/json"})
    if 400 <= answer.status_code < 500 and error_body(answer):
        raise Refused(f"{answer.status_code} {path}")
    raise Broken(f"{path} {body[:40]!r}: {answer.status_code} {answer.text[:200]!r}")


def other_model(t: Target, rng: random.Random) -> str:
    """A request naming another model: loaded on demand, unloaded after the keep-alive."""
    model = rng.choice([SECOND_COPY, TINY_CHAT])
    reply = t.openai.chat.completions.create(model=model, messages=user(rng.choice(PROMPTS)), max_tokens=4)
    if reply.model != model:
        raise Broken(f"asked {model}, answered by {reply.model}")
    return "complete"


# Kind -> (request, weight). Malformed and over-long requests must be refused.
KINDS = {
    "openai_chat": (openai_chat, 3),
    "openai_chat_stream": (openai_chat_stream, 3),
    "openai_tools": (openai_tools, 1),
    "openai_json_schema": (openai_json_schema, 1),
    "responses": (responses, 2),
    "responses_stream": (responses_stream, 1),
    "anthropic": (anthropic_messages, 2),
    "anthropic_stream": (anthropic_stream, 2),
    "ollama_chat": (ollama_chat, 2),
    "ollama_generate": (ollama_generate, 1),
    "embeddings": (embeddings, 2),
    "cancel": (cancel_mid_stream, 1),
    "over_long": (over_long, 1),
    "malformed": (malformed, 2),
    "other_model": (other_model, 1),
}
MUST_REFUSE = {"over_long", "malformed"}


def error_body(response: httpx.Response) -> bool:
    try:
        body = response.json()
    except ValueError:
        return False
    return isinstance(body, dict) and bool(body.get("error"))


def run_one(kind: str, t: Target, rng: random.Random) -> tuple[str, str]:
    """(outcome, detail): complete, cancelled, refused or broken."""
    try:
        outcome = KINDS[kind][0](t, rng)
        return outcome, ""
    except Refused as e:
        return "refused", str(e)
    except Broken as e:
        return "broken", str(e)
    except (openai.APIStatusError, anthropic.APIStatusError) as e:
        # A status with an error body, or a stream's error event (the SDKs raise it with its body).
        if e.status_code >= 400 or isinstance(e.body, dict):
            if error_body(e.response) or isinstance(e.body, dict):
                return refusal(kind, e.status_code, str(e))
        return "broken", f"{type(e).__name__} {e.status_code}: {e}"
    except ollama.ResponseError as e:
        if e.status_code >= 400 and e.error:
            return refusal(kind, e.status_code, e.error)
        return "broken", f"ResponseError {e.status_code}: {e.error}"
    except (openai.APIConnectionError, anthropic.APIConnectionError, httpx.HTTPError, ConnectionError, OSError) as e:
        return "broken", f"{type(e).__name__}: {e} ({getattr(e, '__cause__', None)!r})"
    except (openai.APIError, anthropic.APIError) as e:
        # The OpenAI SDK raises a chat stream's error event as a bare APIError with its body.
        if isinstance(e.body, dict) and e.body:
            return "refused", f"stream error event: {str(e)[:200]}"
        return "broken", f"{type(e).__name__}: {e}"
    except Exception as e:  # noqa: BLE001: anything else a client raised is a broken reply
        return "broken", f"{type(e).__name__}: {e}"


def refusal(kind: str, status: int, message: str) -> tuple[str, str]:
    # A good request may be refused only for load (503/429: no room now); the bad ones must be.
    if kind in MUST_REFUSE or status in (429, 503):
        return "refused", f"{status} {message[:120]}"
    return "broken", f"a good request refused: {status} {message[:300]}"


# ---------------------------------------------------------------------------------------------
# Processes and samples


def proc_status(pid: int) -> dict | None:
    try:
        fields = dict(line.split(":", 1) for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines())
        return {
            "rss_mib": int(fields["VmRSS"].split()[0]) / 1024,
            "threads": int(fields["Threads"]),
            "fds": len(os.listdir(f"/proc/{pid}/fd")),
        }
    except (OSError, KeyError):
        return None


def db_bytes(home: pathlib.Path) -> dict:
    return {suffix or "db": (home / f"confab.db{suffix}").stat().st_size if (home / f"confab.db{suffix}").exists() else 0
            for suffix in ("", "-wal", "-shm")}


def sample(server_pid: int, app_pid: int | None, home: pathlib.Path, t0: float, handles: bool = False) -> dict:
    """`handles`: also what each open handle is (for the idle samples, to say what was left)."""
    taken = {
        "t": round(time.time() - t0, 1),
        "server": proc_status(server_pid),
        "app": proc_status(app_pid) if app_pid else None,
        "db": db_bytes(home),
    }
    if handles:
        taken["handles"] = {"server": fd_targets(server_pid), "app": fd_targets(app_pid) if app_pid else None}
        taken["thread_names"] = {"server": thread_names(server_pid), "app": thread_names(app_pid) if app_pid else None}
    return taken


def fd_targets(pid: int) -> list[str]:
    out = []
    for fd in sorted(os.listdir(f"/proc/{pid}/fd"), key=int):
        try:
            out.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            pass
    return sorted(out)


def thread_names(pid: int) -> list[str]:
    out = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            out.append(pathlib.Path(f"/proc/{pid}/task/{task}/comm").read_text().strip())
        except OSError:
            pass
    return sorted(out)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


class AppDriver:
    """bench/soak_app.py on the e2e venv (under xvfb-run without a display)."""

    def __init__(self, home: pathlib.Path, app: pathlib.Path, chat_seconds: float, document_after: float):
        command = [str(E2E_PYTHON), str(ROOT / "bench" / "soak_app.py"), "--home", str(home), "--app", str(app),
                   "--chat-seconds", str(chat_seconds), "--warm-document", str(home / "documents" / WARM_DOCUMENT),
                   "--document", str(home / "documents" / DOCUMENT),
                   "--document-after", str(document_after)]
        if not os.environ.get("DISPLAY"):
            command = ["xvfb-run", "-a", "-s", "-screen 0 1400x900x24", *command]
        env = dict(os.environ, CONFAB_HOME=str(home))
        env.pop("WEBKIT_DISABLE_COMPOSITING_MODE", None)
        env.pop("WEBKIT_DISABLE_DMABUF_RENDERER", None)
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
                                        start_new_session=True)
        self.events: "queue.Queue[dict]" = queue.Queue()
        self.seen: list[dict] = []
        self.pid: int | None = None
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                print(f"app: {line.rstrip()}", file=sys.stderr)
                continue
            if event["event"] == "started":
                self.pid = event["pid"]
            if event["event"] in ("chat", "document", "error"):
                print(f"app: {event['event']} {event.get('status', event.get('message', ''))} "
                      f"{event.get('seconds', 0):.1f}s", file=sys.stderr)
            self.seen.append(event)
            self.events.put(event)
        self.events.put({"event": "exited"})

    def wait(self, name: str, timeout: float) -> dict:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                event = self.events.get(timeout=max(0.1, end - time.monotonic()))
            except queue.Empty:
                break
            if event["event"] == name:
                return event
            if event["event"] in ("exited", "stopped"):
                raise RuntimeError(f"the app driver ended while waiting for {name}")
        raise TimeoutError(f"no {name} from the app driver in {timeout:.0f}s")

    def send(self, command: str):
        try:
            self.process.stdin.write(command + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            pass

    def stop(self):
        self.send("quit")
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def make_home(root: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """CONFAB_HOME (the default model and the embedding model in its models folder, as the app
    finds them) and the server's extra --folder (a second name for the default model, a tiny
    Qwen3)."""
    home, extra = root / "home", root / "extra"
    model = default_model()
    if not model.is_file():
        sys.exit(f"the default model is not installed at {model}; run scripts/setup.sh")
    (home / "models" / model.parent.name).mkdir(parents=True)
    (home / "models" / model.parent.name / model.name).symlink_to(model)
    (home / "models" / EMBEDDER).symlink_to(TINY / "qwen3_embedding", target_is_directory=True)
    extra.mkdir()
    (extra / f"{SECOND_COPY}.gguf").symlink_to(model)
    (extra / TINY_CHAT).symlink_to(TINY / "qwen3", target_is_directory=True)
    (home / "documents").mkdir()
    for name in (WARM_DOCUMENT, DOCUMENT):
        shutil.copy(DOCUMENTS / name, home / "documents" / name)
    return home, extra


def start_server(confab: pathlib.Path, home: pathlib.Path, extra: pathlib.Path) -> tuple[subprocess.Popen, str, str]:
    log = open(home.parent / "serve.log", "w")
    process = subprocess.Popen(
        [str(confab), "serve", "--port", "0", "--folder", str(extra), "--embedding-model", str(home / "models" / EMBEDDER),
         "--keep-alive", f"{KEEP_ALIVE_S}s", "--prefix-cache-memory-mib", str(PREFIX_CACHE_MIB),
         "--prefix-cache-disk-mib", str(PREFIX_CACHE_MIB * 2), "-v"],
        env=dict(os.environ, CONFAB_HOME=str(home)), stdout=subprocess.PIPE, stderr=log, text=True,
    )
    line = process.stdout.readline()
    match = re.search(r"model `([^`]+)` at (http://\S+)/v1", line)
    if not match:
        process.kill()
        sys.exit(f"confab serve did not start: {line!r}; see {home.parent / 'serve.log'}")
    return process, match.group(1), match.group(2)


# ---------------------------------------------------------------------------------------------
# The soak


@dataclass
class Record:
    t: float  # when it ended, seconds since the start
    kind: str
    seconds: float
    outcome: str
    detail: str


def main() -> int:
    global REQUEST_TIMEOUT
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=30, help="how long the traffic runs (default 30)")
    parser.add_argument("--sample-seconds", type=float, default=60, help="between samples (default 60)")
    parser.add_argument("--clients", type=int, default=4, help="concurrent client threads (default 4)")
    parser.add_argument("--app-chat-seconds", type=float, default=60, help="between the app's chat messages")
    parser.add_argument("--request-timeout", type=float, default=REQUEST_TIMEOUT, help="a reply slower than this is a hang")
    parser.add_argument("--with-app", dest="with_app", action="store_true", default=True, help="drive the app too (default)")
    parser.add_argument("--no-app", dest="with_app", action="store_false", help="the server alone")
    parser.add_argument("--confab", type=pathlib.Path, default=TARGET / "debug" / "confab")
    parser.add_argument("--app", type=pathlib.Path, default=pathlib.Path(os.environ.get("CONFAB_E2E_APP") or TARGET / "debug" / "confab-app"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the data folder")
    args = parser.parse_args()
    REQUEST_TIMEOUT = args.request_timeout

    root = pathlib.Path(tempfile.mkdtemp(prefix="confab-soak-"))
    home, extra = make_home(root)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    print(f"soak: data folder {home}; {args.minutes:g} min, a sample every {args.sample_seconds:g} s, "
          f"{args.clients} clients{', with the app' if args.with_app else ''}", file=sys.stderr)
    server, model, base = start_server(args.confab, home, extra)
    t0 = time.time()
    failures: list[str] = []
    app: AppDriver | None = None
    try:
        context = next(m.get("context_length") or m.get("max_context_length") or 8192
                       for m in httpx.get(base + "/v1/models").json()["data"] if m["id"] == model)
        warm = Target(base, model, int(context))

        if args.with_app:
            app = AppDriver(home, args.app, args.app_chat_seconds, document_after=args.minutes * 60 / 3)
            app.wait("ready", 600)
            app.wait("chat", 600)  # its first reply: the app's model and caches warm

        # Warm-up: each kind once, so what is made lazily is made before the idle baseline.
        rng = random.Random(args.seed)
        for kind in KINDS:
            outcome, detail = run_one(kind, warm, rng)
            if outcome == "broken":
                failures.append(f"warm-up {kind}: {detail}")
        warm.close()
        if app:
            app.send("pause")
            app.wait("paused", 600)
        time.sleep(SETTLE_S)
        baseline = sample(server.pid, app.pid if app else None, home, t0, handles=True)
        print(f"soak: idle baseline {json.dumps({k: v for k, v in baseline.items() if k not in ('handles', 'thread_names')})}", file=sys.stderr)
        if app:
            app.send("resume")

        target = Target(base, model, int(context))
        records, samples = traffic(args, target, server.pid, app, home, t0)
        target.close()

        if app:
            app.send("pause")
            app.wait("paused", 900)
        time.sleep(SETTLE_S)
        idle = sample(server.pid, app.pid if app else None, home, t0, handles=True)
        print(f"soak: idle after {json.dumps({k: v for k, v in idle.items() if k not in ('handles', 'thread_names')})}", file=sys.stderr)
        health = httpx.get(base + "/health").json()
    finally:
        if app:
            app.stop()
        server.send_signal(signal.SIGINT)
        try:
            code = server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            code = "killed after 60 s"
    if code != 0:
        failures.append(f"confab serve exited with {code} on Ctrl-C")

    integrity = sqlite3.connect(home / "confab.db").execute("PRAGMA integrity_check").fetchall()
    if integrity != [("ok",)]:
        failures.append(f"integrity_check: {integrity[:5]}")
    failures += judge(records, samples, baseline, idle, app, health)
    report(stamp, args, records, samples, baseline, idle, app, integrity, failures)
    if not args.keep and not failures:
        shutil.rmtree(root, ignore_errors=True)
    else:
        print(f"soak: data folder and serve.log kept in {root}", file=sys.stderr)
    return 1 if failures else 0


def traffic(args, target: Target, server_pid: int, app: AppDriver | None, home: pathlib.Path, t0: float):
    records: list[Record] = []
    lock = threading.Lock()
    start = time.time()
    end = start + args.minutes * 60
    names = list(KINDS)
    weights = [KINDS[k][1] for k in names]

    def client(n: int):
        rng = random.Random(args.seed * 1000 + n)
        while time.time() < end:
            kind = rng.choices(names, weights)[0]
            began = time.monotonic()
            outcome, detail = run_one(kind, target, rng)
            elapsed = time.monotonic() - began
            if outcome != "broken" and elapsed > args.request_timeout:
                outcome, detail = "broken", f"took {elapsed:.0f} s"
            with lock:
                records.append(Record(round(time.time() - t0, 2), kind, elapsed, outcome, detail))
            if outcome == "broken":
                print(f"soak: BROKEN {kind}: {detail}", file=sys.stderr)

    threads = [threading.Thread(target=client, args=(n,), daemon=True) for n in range(args.clients)]
    for thread in threads:
        thread.start()
    samples = [sample(server_pid, app.pid if app else None, home, t0)]
    while time.time() < end:
        time.sleep(min(args.sample_seconds, max(0.0, end - time.time())))
        samples.append(sample(server_pid, app.pid if app else None, home, t0))
        with lock:
            done = len(records)
        s = samples[-1]
        print(f"soak: t={s['t']:.0f}s requests={done} server={s['server']} app={s['app']} db={s['db']}", file=sys.stderr)
    for thread in threads:
        # A request still running when the time is up may take up to the request timeout.
        thread.join(args.request_timeout + 30)
        if thread.is_alive():
            records.append(Record(round(time.time() - t0, 2), "?", args.request_timeout, "broken", "a client never returned (hang)"))
    return records, samples


def judge(records: list[Record], samples: list[dict], baseline: dict, idle: dict, app: AppDriver | None, health: dict) -> list[str]:
    failures = []
    broken = [r for r in records if r.outcome == "broken"]
    if broken:
        failures.append(f"{len(broken)} broken replies, e.g. " + "; ".join(f"{r.kind}: {r.detail}" for r in broken[:5]))
    if not records:
        failures.append("no requests ran")
    if health.get("active_requests"):
        failures.append(f"requests still active when idle: {health}")
    for who in ("server", "app"):
        series = [s[who] for s in samples if s[who]]
        if who == "app" and not app:
            continue
        if len(series) < 3 or not idle[who] or not baseline[who]:
            failures.append(f"{who}: too few samples ({len(series)}) to judge")
            continue
        third = len(series) // 3
        middle, last = series[third: 2 * third] or series[:1], series[2 * third:]
        peak_middle = max(x["rss_mib"] for x in middle)
        peak_last = max(x["rss_mib"] for x in last)
        allowed = max(peak_middle * RSS_GROWTH_SHARE, RSS_GROWTH_MIB)
        if peak_last - peak_middle > allowed:
            failures.append(f"{who}: resident memory still growing: last third's peak {peak_last:.0f} MiB, "
                            f"middle third's {peak_middle:.0f} MiB (allowed +{allowed:.0f})")
        for name, slack in IDLE_SLACK.items():
            if idle[who][name] > baseline[who][name] + slack:
                # What is new since the baseline: handles' targets, threads' names.
                left = list(idle["handles" if name == "fds" else "thread_names"][who])
                for h in baseline["handles" if name == "fds" else "thread_names"][who]:
                    if h in left:
                        left.remove(h)
                extra = f": {left[:8]}"
                failures.append(f"{who}: {name} idle after the soak {idle[who][name]}, baseline {baseline[who][name]} (+{slack} allowed){extra}")
    if app:
        events = app.seen
        chats = [e for e in events if e["event"] == "chat"]
        bad = [e for e in chats if e["status"] != "complete"]
        if not chats:
            failures.append("the app sent no chat message")
        if bad:
            failures.append(f"app: {len(bad)} of {len(chats)} chat replies ended {sorted({e['status'] for e in bad})}")
        errors = [e["message"] for e in events if e["event"] == "error"]
        if errors:
            failures.append(f"app: {len(errors)} steps failed: {errors[:3]}")
        documents = {e["name"]: e for e in events if e["event"] == "document"}
        for name in (WARM_DOCUMENT, DOCUMENT):
            if name not in documents:
                failures.append(f"app: {name} was never indexed and asked about")
            elif documents[name]["status"] != "complete" or not documents[name]["sources"]:
                failures.append(f"app: the reply about {name}: {documents[name]}")
    return failures


# ---------------------------------------------------------------------------------------------
# Report


def report(stamp, args, records, samples, baseline, idle, app, integrity, failures):
    RESULTS.mkdir(parents=True, exist_ok=True)
    interval = args.sample_seconds
    lines = [f"# Soak {stamp}", "",
             f"{args.minutes:g} min, {args.clients} clients, a sample every {interval:g} s, "
             f"app {'on' if app else 'off'}; {len(records)} requests. "
             f"RSS/handles/threads from /proc; DB = confab.db + -wal (+ -shm) in KiB.", "",
             "| t (s) | server RSS MiB | fds | threads | app RSS MiB | fds | threads | DB KiB | WAL KiB | requests | complete | cancelled | refused | broken | p50 s | p95 s | p99 s |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def proc_cells(p):
        return [f"{p['rss_mib']:.0f}", str(p["fds"]), str(p["threads"])] if p else ["–"] * 3

    def row(label, s, window):
        counts = {o: sum(1 for r in window if r.outcome == o) for o in ("complete", "cancelled", "refused", "broken")}
        latencies = [r.seconds for r in window if r.outcome in ("complete", "cancelled")]
        pcts = [f"{percentile(latencies, p):.2f}" for p in (50, 95, 99)] if latencies else ["–"] * 3
        return "| " + " | ".join([label, *proc_cells(s["server"]), *proc_cells(s["app"]),
                                   f"{s['db']['db'] / 1024:.0f}", f"{s['db']['-wal'] / 1024:.0f}", str(len(window)),
                                   *(str(counts[o]) for o in counts), *pcts]) + " |"

    lines.append(row("idle before", baseline, []))
    previous = 0.0
    for s in samples:
        window = [r for r in records if previous < r.t <= s["t"]]
        lines.append(row(f"{s['t']:.0f}", s, window))
        previous = s["t"]
    late = [r for r in records if r.t > previous]
    if late:
        lines.append(row("after (finishing)", samples[-1], late))
    lines.append(row("idle after", idle, []))

    # Latency per kind, per interval: p50/p95/p99 seconds of replies that completed.
    bounds = [s["t"] for s in samples]
    lines += ["", "Latency per kind (p50/p95/p99 s of complete replies; n; refused; broken), the whole soak and per third:", "",
              "| kind | n | refused | broken | whole | first third | middle third | last third |", "|---|---:|---:|---:|---|---|---|---|"]
    # Thirds of the traffic's time (the first sample is taken as it starts).
    first = bounds[0] if bounds else 0
    span = (bounds[-1] - first) if len(bounds) > 1 else 1
    for kind in KINDS:
        mine = [r for r in records if r.kind == kind]
        def cell(rs):
            ok = [r.seconds for r in rs if r.outcome in ("complete", "cancelled")]
            return "/".join(f"{percentile(ok, p):.2f}" for p in (50, 95, 99)) if ok else "–"
        edges = [first, first + span / 3, first + 2 * span / 3, float("inf")]
        thirds = [[r for r in mine if edges[i] < r.t <= edges[i + 1]] for i in range(3)]
        lines.append(f"| {kind} | {len(mine)} | {sum(r.outcome == 'refused' for r in mine)} | {sum(r.outcome == 'broken' for r in mine)} | "
                     f"{cell(mine)} | {' | '.join(cell(t) for t in thirds)} |")
    if app:
        chats = [e for e in app.seen if e["event"] == "chat"]
        documents = [{k: round(v, 1) if isinstance(v, float) else v for k, v in e.items() if k not in ("event", "t")}
                     for e in app.seen if e["event"] == "document"]
        lines += ["", f"App: {len(chats)} chat messages, ended {sorted({e['status'] for e in chats})}, "
                      f"{statistics.median([e['seconds'] for e in chats]) if chats else 0:.1f} s median; "
                      f"documents: {documents}"]
    lines += ["", f"integrity_check: {integrity[0][0] if integrity else '?'}",
              "", "**PASS**" if not failures else "**FAIL**:\n" + "\n".join(f"- {f}" for f in failures)]
    text = "\n".join(lines) + "\n"
    md = RESULTS / f"soak-{stamp}.md"
    md.write_text(text)
    # Per interval and kind: [p50, p95, p99 of complete replies (null if none), n, refused, broken].
    latency, previous = {}, 0.0
    for s in samples:
        window = [r for r in records if previous < r.t <= s["t"]]
        previous = s["t"]
        latency[f"{s['t']:.0f}"] = {}
        for kind in KINDS:
            mine = [r for r in window if r.kind == kind]
            ok = [r.seconds for r in mine if r.outcome in ("complete", "cancelled")]
            latency[f"{s['t']:.0f}"][kind] = [*(round(percentile(ok, p), 3) if ok else None for p in (50, 95, 99)), len(mine),
                                               sum(r.outcome == "refused" for r in mine), sum(r.outcome == "broken" for r in mine)]
    (RESULTS / f"soak-{stamp}.json").write_text(json.dumps({"latency_per_interval": latency,
        "args": {k: str(v) for k, v in vars(args).items()}, "baseline": baseline, "idle": idle, "samples": samples,
        "records": [r.__dict__ for r in records], "app": app.seen if app else None, "failures": failures}, indent=1))
    svg = RESULTS / f"soak-{stamp}.svg"
    svg.write_text(chart(samples))
    print(text)
    print(f"soak: wrote {md}, {md.with_suffix('.json')}, {svg}", file=sys.stderr)


def chart(samples: list[dict]) -> str:
    """Four panels against time (no matplotlib in the venv): RSS, handles, threads, DB."""
    panels = [
        ("resident MiB", [("server", lambda s: s["server"] and s["server"]["rss_mib"]), ("app", lambda s: s["app"] and s["app"]["rss_mib"])]),
        ("open handles", [("server", lambda s: s["server"] and s["server"]["fds"]), ("app", lambda s: s["app"] and s["app"]["fds"])]),
        ("threads", [("server", lambda s: s["server"] and s["server"]["threads"]), ("app", lambda s: s["app"] and s["app"]["threads"])]),
        ("database KiB", [("db", lambda s: s["db"]["db"] / 1024), ("wal", lambda s: s["db"]["-wal"] / 1024)]),
    ]
    colours = ["#1f77b4", "#d62728"]
    width, height, pad = 420, 200, 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * width}" height="{2 * height}" font-family="sans-serif" font-size="11">',
           '<rect width="100%" height="100%" fill="white"/>']
    tmax = max((s["t"] for s in samples), default=1) or 1
    for i, (title, series) in enumerate(panels):
        ox, oy = (i % 2) * width, (i // 2) * height
        values = [v for _, f in series for s in samples if (v := f(s)) is not None]
        top = max(values, default=1) * 1.1 or 1
        out.append(f'<text x="{ox + pad}" y="{oy + 15}" font-weight="bold">{title}</text>')
        out.append(f'<line x1="{ox + pad}" y1="{oy + height - pad}" x2="{ox + width - 10}" y2="{oy + height - pad}" stroke="black"/>')
        out.append(f'<line x1="{ox + pad}" y1="{oy + 25}" x2="{ox + pad}" y2="{oy + height - pad}" stroke="black"/>')
        out.append(f'<text x="{ox + 2}" y="{oy + 30}">{top:.0f}</text><text x="{ox + 2}" y="{oy + height - pad}">0</text>')
        out.append(f'<text x="{ox + width - 60}" y="{oy + height - pad + 14}">{tmax:.0f} s</text>')
        for j, (name, f) in enumerate(series):
            points = [(s["t"], v) for s in samples if (v := f(s)) is not None]
            xy = " ".join(f"{ox + pad + (width - pad - 10) * t / tmax:.1f},{oy + height - pad - (height - pad - 25) * v / top:.1f}" for t, v in points)
            out.append(f'<polyline fill="none" stroke="{colours[j]}" stroke-width="1.5" points="{xy}"/>')
            out.append(f'<text x="{ox + width - 110 + 50 * j}" y="{oy + 15}" fill="{colours[j]}">{name}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
