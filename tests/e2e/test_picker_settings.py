"""The model picker, Settings and a chat's own system prompt in the real window (issue 19, items
7 and 8): what the picker says of the default model, Show in folder through the opener (replaced
by a script that writes down what it was given, so no file manager starts), unload and load
again, Get more models; the Settings groups, a preset and Reset to defaults, saved; a chat's own
system prompt saved with the chat; a model folder picked by browsing, whose models the picker
then lists; a link in a reply opened only after the confirmation that shows its address (issue
19, item 9); the loaded model's keys and values at 8 bits (issue 38)."""
import os
import pathlib
import sqlite3
import stat
import tempfile

from selenium.webdriver.common.keys import Keys

from harness import AppTestCase, installed_default_model


class PickerAndSettings(AppTestCase):
    @classmethod
    def setUpClass(cls):
        cls.opener_dir = pathlib.Path(tempfile.mkdtemp(prefix="confab-e2e-opener-"))
        cls.opened = cls.opener_dir / "opened.txt"
        opener = cls.opener_dir / "opener.sh"
        opener.write_text(f'#!/bin/sh\nprintf "%s\\n" "$1" >> "{cls.opened}"\n')
        opener.chmod(opener.stat().st_mode | stat.S_IEXEC)
        cls.app_env = {"CONFAB_OPENER": str(opener)}
        super().setUpClass()

    def opened_lines(self) -> list[str]:
        return self.opened.read_text().splitlines() if self.opened.exists() else []

    def default_row(self):
        app = self.app
        if not app.one("model-row"):
            app.click("model-picker")
        return app.wait_for("model-row", 30, extra=f'[data-path$="{installed_default_model().name}"]')

    def test_01_the_picker_says_what_people_choose_by_and_shows_the_folder(self):
        app = self.app
        app.wait_model_ready()
        row = self.default_row()
        facts = app.text(app.one("model-facts", within=row))
        self.assertIn("llama", facts)
        self.assertIn("135M parameters", facts)
        self.assertIn("on disk", facts)
        self.assertIn("context", facts)
        self.assertTrue(app.text(app.one("model-memory", within=row)).startswith("needs about"))
        app.screenshot("model-picker-rows", app.js("return document.querySelector('.model-popover')"))
        app.one("show-model-folder", within=row).click()
        # The model's folder as the picker lists it (in this home, a link to the installed model).
        folder = str(pathlib.Path(row.get_attribute("data-path")).parent)
        app.wait_until(lambda: folder in self.opened_lines(), 15, lambda: f"the opener got {self.opened_lines()}, not {folder}")

    def test_02_unload_then_get_more_models_then_load_again(self):
        app = self.app
        row = self.default_row()
        app.one("unload-model", within=row).click()
        app.wait_until(lambda: app.model_state() == "none", 30, "the model did not unload")
        self.assertIn("No model loaded", app.text(app.wait_for("model-status")))
        app.click("model-picker")
        app.click("get-more-models")
        app.wait_for("get-models")
        app.click("get-models-close")
        app.wait_gone("get-models", 10)
        self.default_row()
        app.click("model-item", extra=f'[data-path$="{installed_default_model().name}"]')
        app.wait_model_ready()

    def test_03_settings_groups_a_preset_and_reset_to_defaults(self):
        app = self.app
        pane = app.open_settings()
        # The groups are drawn once the saved settings have come back from the backend.
        headings = lambda: app.js("return Array.from(arguments[0].querySelectorAll('section[id] > h3')).map(h => h.textContent)", pane)
        app.wait_until(headings, 10, "the settings pane shows no groups")
        self.assertEqual(headings(), ["Chat", "Model", "Appearance", "Storage", "Tools", "Advanced"])
        app.click("preset-creative")
        self.assertEqual(app.setting("temperature").get_attribute("value"), "0.9")
        self.assertEqual(app.wait_for("preset-creative").get_attribute("aria-pressed"), "true")
        app.click("settings-save")
        app.wait_gone("settings-pane", 10)
        app.open_settings()
        self.assertEqual(app.setting("temperature").get_attribute("value"), "0.9", "the preset was saved")
        app.click("settings-reset")
        self.assertEqual(app.wait_for("preset-model").get_attribute("aria-pressed"), "true")
        self.assertEqual(app.setting("temperature").get_attribute("value"), "", "left to the model")
        app.click("settings-save")
        app.wait_gone("settings-pane", 10)
        app.open_settings()
        try:
            self.assertEqual(app.wait_for("preset-model").get_attribute("aria-pressed"), "true", "the defaults were saved")
            self.assertTrue(app.text(app.wait_for("mlx-version")))
            self.assertTrue(app.text(app.wait_for("app-version")))
        finally:
            app.close_settings()

    def test_04_a_chat_keeps_its_own_system_prompt(self):
        app = self.app
        app.new_chat()
        _, reply = app.send("Hi")
        app.wait_reply(reply["id"])
        button = app.wait_for("chat-prompt-button")
        self.assertEqual(app.text(button), "Chat prompt")
        button.click()
        app.fill(app.wait_for("chat-prompt-field"), "Answer in one word.")
        app.click("chat-prompt-save")
        app.wait_until(lambda: app.text(app.wait_for("chat-prompt-button")) == "Chat prompt (own)", 15, "the chat's prompt was not saved")
        app.click("chat-prompt-button")
        self.assertEqual(app.wait_for("chat-prompt-field").get_attribute("value"), "Answer in one word.")
        app.click("chat-prompt-clear")
        app.wait_until(lambda: app.text(app.wait_for("chat-prompt-button")) == "Chat prompt", 15, "the chat's prompt was not cleared")

    def test_06_a_700_px_window_keeps_the_chat_readable_and_the_list_can_be_hidden(self):
        app = self.app
        size = app.d.get_window_size()
        try:
            app.d.set_window_size(700, size["height"])
            app.wait_until(lambda: app.js("return window.innerWidth") <= 720, 10, "the window did not narrow")
            width = lambda testid: app.js(f"return document.querySelector('[data-testid=\"{testid}\"]').getBoundingClientRect().width")
            self.assertGreaterEqual(width("composer-input"), 300, "the composer keeps room to type")
            app.screenshot("narrow-chat")
            app.click("sidebar-toggle")
            shown = lambda: app.js("const s = document.querySelector('.sidebar'); return !!s && s.getBoundingClientRect().width > 0")
            app.wait_until(lambda: not shown(), 10, "the chat list is still shown")
            self.assertGreaterEqual(width("composer-input"), 500, "the chat takes the list's room")
            app.screenshot("narrow-chat-list-hidden")
            app.click("sidebar-toggle")
            app.wait_for("conversation-item", 10)
        finally:
            app.d.set_window_size(size["width"], size["height"])

    def test_05_a_link_in_a_reply_opens_after_a_confirmation_showing_its_address(self):
        app = self.app
        conversation = app.current_conversation()
        reply = app.last("assistant")
        # The small model will not write a link when asked: the reply gets one in the database.
        address = "https://example.com/docs?page=1#intro"
        with sqlite3.connect(self.home / "confab.db", timeout=10) as db:
            db.execute("UPDATE messages SET content = ? WHERE id = ?", (f"See [the docs]({address}).", int(reply["id"])))
        app.new_chat()
        app.open_conversation(conversation)
        link = app.wait_until(lambda: app.js("return document.querySelector('[data-testid=\"message-content\"] a')"), 15, "no link shown")
        opened_before = len(self.opened_lines())
        link.click()
        app.wait_for("open-link-dialog")
        self.assertEqual(app.text(app.one("open-link-address")), address)
        self.assertEqual(len(self.opened_lines()), opened_before, "nothing opens before the confirmation")
        app.click("open-link-confirm")
        app.wait_gone("open-link-dialog", 10)
        app.wait_until(lambda: address in self.opened_lines(), 15, lambda: f"the opener got {self.opened_lines()}")

    def test_07_a_model_folder_picked_by_browsing_is_searched(self):
        app = self.app
        # A folder of the person's with a model in a subfolder (a link to the installed GGUF file).
        folder = pathlib.Path(tempfile.mkdtemp(prefix="confab-e2e-folder-")).resolve()
        (folder / "llms").mkdir()
        model = folder / "llms" / "my-smol.gguf"
        model.symlink_to(installed_default_model())
        (folder / "Photos").mkdir()
        app.open_settings()
        try:
            # Browsing starts from a path typed in the box; without one, from the home folder.
            app.fill(app.setting("model_folder_new"), str(folder))
            app.click("setting-model_folder_browse")
            app.wait_until(lambda: app.text(app.wait_for("folder-picker-path")) == str(folder), 15, "the picker did not open the typed folder")
            entries = app.all("folder-picker-entry")
            listed = [(e.get_attribute("data-name"), e.get_attribute("data-has-model")) for e in entries]
            self.assertEqual(listed, [("llms", "true"), ("Photos", "false")])
            # Two frames, so that the listing is painted before the window is captured.
            app.d.execute_async_script("requestAnimationFrame(() => requestAnimationFrame(arguments[0]))")
            app.screenshot("folder-picker", app.wait_for("folder-picker"))
            entries[0].click()
            app.wait_until(lambda: app.text(app.wait_for("folder-picker-path")) == str(folder / "llms"), 15, "the picker did not open llms")
            self.assertIn("1 model directly in this folder", app.text(app.one("folder-picker-models")))
            app.click("folder-picker-choose")
            app.wait_gone("folder-picker", 10)
            app.click("settings-save")
            app.wait_gone("settings-pane", 10)
        except BaseException:
            if app.one("folder-picker"):
                app.one("folder-picker").send_keys(Keys.ESCAPE)
            app.close_settings()
            raise
        app.click("model-picker")
        app.wait_for("model-row", 30, extra=f'[data-path="{model}"]')
        app.click("model-picker")

    def test_08_keys_and_values_at_8_bits_reload_the_model_and_answer(self):
        """Settings › Model › Keys and values (issue 38): 8-bit reloads the loaded model, the header
        says so and a reply streams; Full precision reloads it as it was."""
        app = self.app
        app.set_settings(kv_bits="8")
        app.wait_until(lambda: "8-bit keys/values" in app.body_text(), 120, "the model did not reload with 8-bit keys and values")
        app.new_chat()
        _, reply = app.send("Hi")
        done = app.wait_reply(reply["id"])
        self.assertEqual(done["status"], "complete", done)
        self.assertTrue(done["text"].strip(), "an empty reply")
        app.set_settings(kv_bits="")
        app.wait_until(lambda: "keys/values" not in app.body_text() and "context" in app.body_text(), 120,
                       "the model did not reload in full precision")

    def test_09_the_local_server_refuses_foreign_pages_and_admits_the_one_added(self):
        """Settings › Advanced › Local server (issue 55): turned on with an allowed web page, the
        app's server refuses a foreign Host, a foreign Origin and a cross-site text/plain body,
        and answers the added page with CORS headers."""
        import http.client
        import socket

        app = self.app
        app.wait_model_ready()
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        app.set_settings(server_enabled=True, server_port=port, server_origins="https://chat.example.com")

        def send(method, path, headers, body=None):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            try:
                connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
                for name, value in headers.items():
                    connection.putheader(name, value)
                data = body.encode() if body is not None else None
                if data is not None:
                    connection.putheader("Content-Length", str(len(data)))
                connection.endheaders(data)
                response = connection.getresponse()
                return response.status, dict((k.lower(), v) for k, v in response.getheaders()), response.read().decode()
            finally:
                connection.close()

        def listening():
            try:
                return send("GET", "/health", {"Host": f"127.0.0.1:{port}"})[0] == 200
            except OSError:
                return False

        try:
            app.wait_until(listening, 30, f"the app's server is not listening on {port}")
            host = f"127.0.0.1:{port}"
            self.assertEqual(send("GET", "/v1/models", {"Host": f"evil.example:{port}"})[0], 403)
            self.assertEqual(send("GET", "/v1/models", {"Host": host, "Origin": "http://evil.example"})[0], 403)
            chat = '{"model": "x", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1}'
            self.assertEqual(send("POST", "/v1/chat/completions", {"Host": host, "Content-Type": "text/plain"}, chat)[0], 415)
            status, headers, body = send("GET", "/v1/models", {"Host": f"localhost:{port}", "Origin": "https://chat.example.com"})
            self.assertEqual(status, 200, body)
            self.assertEqual(headers.get("access-control-allow-origin"), "https://chat.example.com")
        finally:
            app.set_settings(server_enabled=False, server_origins="")


if __name__ == "__main__":
    import unittest

    unittest.main()
