"""The app's side of tests/server/test_turn_identity.py: a turn written in the real window (a
system prompt in Settings, an image and a Markdown document dropped on the composer, a
question) and the same turn sent to the app's own local server as Chat Completions are one
prompt. The witness is the engine's prefix cache, which the window and the server share: the
server's request is served from the cache as far as its own repeat is. A prompt that differed
by one id (a document read otherwise, a system prompt placed otherwise, an image hashed
otherwise) would miss from there on.

The model is the tiny Qwen3-VL fixture (it reads images) with the template the server's test
serves (tools and `enable_thinking`)."""
import base64
import json
import pathlib
import shutil
import socket
import tempfile
import unittest
import urllib.request

from harness import ROOT, AppTestCase

FIXTURE = ROOT / "tests/reference/fixtures/tiny/qwen3_vl"
TEMPLATE = ROOT / "tests/server/turn_identity_template.jinja"
IMAGE = FIXTURE / "media" / "tall.png"
SYSTEM = "You answer in one word."
QUESTION = "What colour is the note about?"
NOTE = "# Note\n\nThe shed is painted green.\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TurnIdentity(AppTestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = pathlib.Path(tempfile.mkdtemp(prefix="confab-e2e-identity-"))
        model = cls.folder / "qwen3-vl-turn"
        shutil.copytree(FIXTURE, model)
        (model / "chat_template.jinja").write_text(TEMPLATE.read_text())
        cls.note = cls.folder / "note.md"
        cls.note.write_text(NOTE)
        cls.extra_models = {"qwen3-vl-turn": model}
        try:
            super().setUpClass()
        except BaseException:
            shutil.rmtree(cls.folder, ignore_errors=True)
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            shutil.rmtree(cls.folder, ignore_errors=True)

    def chat_completions(self, port: int) -> tuple[int, int]:
        image = base64.b64encode(IMAGE.read_bytes()).decode()
        body = {
            "model": "qwen3-vl-turn", "max_tokens": 1, "temperature": 0,
            "messages": [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": [
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{image}"}},
                    {"type": "file", "file": {"filename": "note.md", "file_data": "data:text/markdown;base64," + base64.b64encode(NOTE.encode()).decode()}},
                    {"type": "text", "text": QUESTION},
                ]},
            ],
        }
        request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", json.dumps(body).encode(),
                                         {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=300) as response:
            usage = json.load(response)["usage"]
        return usage["prompt_tokens"], usage.get("prompt_tokens_details", {}).get("cached_tokens", 0)

    def test_01_the_windows_turn_and_the_servers_are_one_prompt(self):
        app = self.app
        app.wait_model_ready()
        app.click("model-picker")
        app.wait_for("model-item", extra='[data-path$="qwen3-vl-turn"]', timeout=60).click()
        app.wait_until(lambda: "qwen3-vl-turn" in app.text(app.wait_for("model-picker")), 120, "the model was not picked")
        app.wait_model_ready()
        port = free_port()
        app.set_settings(max_tokens=1, seed=1, system_prompt=SYSTEM)
        app.set_settings(server_enabled=True, server_port=port)

        app.new_chat()
        app.drop_files([IMAGE, self.note], app.one("message-list") or app.one("composer-input"))
        app.wait_until(lambda: len(app.all("attachment-chip")) == 2, 60, lambda: f"chips: {len(app.all('attachment-chip'))}")
        _, reply = app.send(QUESTION)
        done = app.wait_reply(reply["id"])
        self.assertEqual(done["status"], "complete", done)

        prompt, cached = self.chat_completions(port)
        again, whole = self.chat_completions(port)
        self.assertEqual(again, prompt)
        self.assertGreater(whole, prompt // 2, "a repeated prompt is served from the cache")
        self.assertEqual(cached, whole, f"the window's prompt and the server's differ after token {cached} of {prompt}")


if __name__ == "__main__":
    unittest.main()
