"""The app's side of bench/soak.py: the real window driven through WebDriver (tests/e2e/harness.py)
on the soak's data folder, chatting now and then and indexing documents: one before the soak's
idle baseline (so that the app's embedding model and its workers are in the baseline), one
during it.

Runs on the e2e venv (Selenium), under an X display; bench/soak.py starts it and reads its JSON
lines on stdout. Commands come on stdin, one a line: `pause` (stop chatting, answer `paused`),
`resume`, `quit` (close the app, answer `stopped`); end of input quits too.

Events (one JSON object a line): started {pid}, ready, chat {seconds, status}, document
{name, seconds, status, sources}, error {message}, paused, stopped.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import queue
import sys
import threading
import time
import traceback

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from harness import ChatApp  # noqa: E402

# What to ask about each document (tests/reference/fixtures/documents), as tests/e2e do.
QUESTIONS = {
    "long_report.pdf": "What is the lighthouse keeper's cat named?",
    "many_pages.pdf": "Which chapter mentions a walnut orchard?",
}
PROMPTS = ["What is the capital of France?", "Name a colour.", "Say hello.", "Count to three.", "Name a fruit."]
# A new conversation after this many messages, so one does not grow for the whole soak.
MESSAGES_PER_CONVERSATION = 5


def say(event: str, **fields) -> None:
    print(json.dumps({"event": event, "t": time.time(), **fields}), flush=True)


def read_commands(commands: "queue.Queue[str]") -> None:
    for line in sys.stdin:
        commands.put(line.strip())
    commands.put("quit")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", required=True, type=pathlib.Path)
    parser.add_argument("--app", required=True, type=pathlib.Path)
    parser.add_argument("--chat-seconds", type=float, default=60, help="between chat messages")
    parser.add_argument("--warm-document", type=pathlib.Path, help="a document to drop and ask about once ready")
    parser.add_argument("--document", type=pathlib.Path, help="a document to drop and ask about, once, later")
    parser.add_argument("--document-after", type=float, default=120, help="seconds after ready")
    args = parser.parse_args()

    commands: "queue.Queue[str]" = queue.Queue()
    threading.Thread(target=read_commands, args=(commands,), daemon=True).start()
    app = ChatApp(args.home, app=args.app, log_name="soak-app")
    try:
        app.start()
        say("started", pid=app.app_pid(), log=str(app.log_path))
        app.wait_model_ready()
        # Short replies: the CPUs are shared with the server's traffic.
        app.set_settings(max_tokens=8, seed=1)
        say("ready")
        if args.warm_document:
            document(app, args.warm_document)
        ready_at = time.monotonic()
        document_done = args.document is None
        sent = 0
        next_chat = time.monotonic()
        chatting = True
        resumed = False
        while True:
            try:
                command = commands.get(timeout=max(0.0, next_chat - time.monotonic()) if chatting else None)
            except queue.Empty:
                command = None
            if command == "quit":
                break
            if command == "pause":
                chatting = False
                say("paused")
                continue
            if command == "resume":
                if not chatting and not resumed:
                    ready_at = time.monotonic()  # the later document's time counts from the soak's start
                resumed = chatting = True
                next_chat = time.monotonic()
                continue
            if command is not None or not chatting:
                continue
            try:
                if not document_done and time.monotonic() - ready_at >= args.document_after:
                    document_done = True
                    document(app, args.document)
                    sent = MESSAGES_PER_CONVERSATION  # a new conversation next
                else:
                    if sent % MESSAGES_PER_CONVERSATION == 0:
                        app.new_chat()
                    chat(app, PROMPTS[sent % len(PROMPTS)])
                    sent += 1
            except Exception as e:  # a step that failed is reported; the soak decides
                say("error", message=f"{type(e).__name__}: {e}", trace=traceback.format_exc(limit=3))
                try:
                    app.screenshot(f"soak-error-{int(time.time())}")
                except Exception:
                    pass
            next_chat = time.monotonic() + args.chat_seconds
    finally:
        app.quit()
        say("stopped")
    return 0


def chat(app: ChatApp, text: str) -> None:
    start = time.monotonic()
    _, reply = app.send(text, timeout=300)
    done = app.wait_reply(reply["id"], timeout=300)
    say("chat", seconds=time.monotonic() - start, status=done["status"])


def document(app: ChatApp, path: pathlib.Path) -> None:
    """Drops the document (a real XDND drop, as tests/e2e/test_document_search.py does) and asks
    about it: the app indexes it with the embedding model in its models folder."""
    start = time.monotonic()
    app.new_chat()
    report = app.drop_files([path], app.one("message-list") or app.one("composer-input"))
    if "DATA-GET" not in report:
        raise AssertionError(f"the window never asked for the dropped data: {report}")
    app.wait_for("attachment-chip", 120)
    _, reply = app.send(QUESTIONS[path.name], timeout=600)
    done = app.wait_reply(reply["id"], timeout=600)
    links = app.all("source-link", within=app.message_el(reply["id"]))
    say("document", name=path.name, seconds=time.monotonic() - start, status=done["status"], sources=len(links))


if __name__ == "__main__":
    sys.exit(main())
