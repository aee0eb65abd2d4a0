"""The sidebar (rename, delete, search with no match) and settings validation."""
import unittest

from selenium.webdriver.common.keys import Keys

from harness import AppTestCase


class Sidebar(AppTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        app = cls.app
        app.wait_model_ready()
        app.set_settings(max_tokens=16, seed=1)
        cls.ids = {}
        for topic in ("apples", "volcanoes"):
            app.new_chat()
            _, reply = app.send(f"Tell me about {topic}.")
            app.wait_reply(reply["id"])
            cls.ids[topic] = app.current_conversation()
            assert cls.ids[topic], "no selected conversation after sending"

    def item(self, topic):
        return self.app.wait_for("conversation-item", extra=f'[data-id="{self.ids[topic]}"]')

    def test_rename(self):
        app = self.app
        item = self.item("apples")
        app.hover(item)
        app.one("rename-button", within=item).click()
        box = app.wait_for("rename-input")
        app.fill(box, "Fruit notes")
        box.send_keys(Keys.ENTER)
        app.wait_until(lambda: app.text(app.one("conversation-title", within=self.item("apples"))) == "Fruit notes", 10,
                       lambda: f"title is {app.text(app.one('conversation-title', within=self.item('apples')))!r}")

    def test_delete_asks_then_removes_only_that_conversation(self):
        app = self.app
        app.open_conversation(self.ids["volcanoes"])
        item = self.item("volcanoes")
        app.hover(item)
        app.one("delete-button", within=item).click()
        # A second, confirming click; until then nothing is gone.
        confirm = app.wait_until(lambda: app.one("delete-button", '[aria-label="Confirm delete"]', within=self.item("volcanoes")),
                                 10, "no confirming delete button")
        self.assertTrue(app.messages(), "messages vanished before the delete was confirmed")
        confirm.click()
        app.wait_until(lambda: not app.all("conversation-item", f'[data-id="{self.ids["volcanoes"]}"]'), 10,
                       "deleted conversation still listed")
        app.wait_until(lambda: not app.messages(), 10, "the deleted conversation's messages still shown")
        self.item("apples")  # the other one stays
        app.open_conversation(self.ids["apples"])

    def test_delete_while_replying_stops_the_reply_and_deletes(self):
        app = self.app
        app.set_settings(max_tokens=2000)
        try:
            app.new_chat()
            _, reply = app.send("Write a very long story about a lighthouse keeper. Make it at least ten paragraphs long.")
            streaming, _ = app.watch_stream(reply["id"], until=lambda r: len(r["text"]) >= 40)
            self.assertEqual(streaming["status"], "streaming", f"the reply ended before the delete: {streaming}")
            here = app.current_conversation()
            item = app.wait_for("conversation-item", extra=f'[data-id="{here}"]')
            app.hover(item)
            app.one("delete-button", within=item).click()
            row = lambda: app.wait_for("conversation-item", extra=f'[data-id="{here}"]')
            app.wait_until(lambda: app.one("delete-button", '[aria-label="Confirm delete"]', within=row()), 10,
                           "no confirming delete button").click()
            # Stopped and deleted: gone from the list, nothing left streaming, no error.
            app.wait_until(lambda: not app.all("conversation-item", f'[data-id="{here}"]'), 30,
                           "the replying conversation is still listed")
            app.wait_until(lambda: not app.messages(), 10, "the deleted conversation's messages still shown")
            self.assertEqual(app.banners("error-banner"), [], "an error was shown for the delete")
            # The engine is free again: a new message gets its reply.
            app.set_settings(max_tokens=16)
            _, after = app.send("Say hello.")
            self.assertEqual(app.wait_reply(after["id"], 120)["status"], "complete")
        finally:
            app.set_settings(max_tokens=16)

    def test_rename_says_why_an_empty_title_is_refused_and_cuts_a_long_one(self):
        app = self.app
        title = lambda: app.text(app.one("conversation-title", within=self.item("apples")))
        before = title()

        def rename(text):
            item = self.item("apples")
            app.hover(item)
            app.one("rename-button", within=item).click()
            box = app.wait_for("rename-input")
            app.fill(box, text)
            box.send_keys(Keys.ENTER)

        rename("   ")
        banner = app.wait_for("error-banner", 10)
        self.assertIn("needs a title", app.text(banner))
        self.assertEqual(title(), before)
        app.dismiss("error-banner")
        rename("long " * 40)  # 200 characters: typing thousands is slow through WebDriver
        app.wait_until(lambda: title().endswith("…"), 10, lambda: f"title is {title()!r}")
        self.assertLessEqual(len(title()), 120)

    def test_search_without_a_match(self):
        app = self.app
        box = app.fill("search-input", "zzqxjvk")
        app.wait_until(lambda: "No messages match" in app.text(app.one("sidebar")), 20,
                       lambda: f"sidebar says {app.text(app.one('sidebar'))!r}")
        self.assertEqual(app.all("search-result"), [])
        box.send_keys(Keys.ESCAPE)
        app.wait_for("conversation-item", 10)

    def test_settings_refuse_a_bad_value_and_keep_the_saved_one(self):
        app = self.app
        app.open_settings()
        # Empty when the model's own temperature applies (the default), else the person's number.
        saved = app.setting("temperature").get_attribute("value")
        app.close_settings()
        with self.assertRaises(AssertionError) as refused:
            app.set_settings(temperature=-1)
        self.assertRegex(str(refused.exception).lower(), r"temperature", "the error names the field")
        app.screenshot("settings-refused")
        app.close_settings()
        app.open_settings()
        self.assertEqual(app.setting("temperature").get_attribute("value"), saved, "the saved temperature is kept")
        app.close_settings()


if __name__ == "__main__":
    unittest.main()
