"""Keyboard reachability (issue 59, finding 10): with 8 chats the message box is one Tab and
Enter away through the "Skip to message box" link, the chat list is one Tab stop, and `?` opens
the shortcuts page, which Esc closes, giving the focus back."""
import time
import unittest

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from harness import AppTestCase

# What the focused element is, in a word: its test id, else its class, else its tag.
DESCRIBE_FOCUS_JS = """
const el = document.activeElement;
if (!el || el === document.body) return 'body';
return el.dataset.testid || (el.className && String(el.className)) || el.tagName.toLowerCase();
"""


class Keyboard(AppTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        app = cls.app
        app.wait_model_ready()
        app.set_settings(max_tokens=2, seed=1)
        for n in range(8):
            app.new_chat()
            _, reply = app.send(f"Chat {n + 1}: say hi.")
            app.wait_reply(reply["id"])
        app.wait_until(lambda: len(app.all("conversation-item")) == 8, 10,
                       lambda: f"{len(app.all('conversation-item'))} chats listed, not 8")

    def focused(self) -> str:
        return self.app.js(DESCRIBE_FOCUS_JS)

    def from_top(self) -> None:
        """Focus back at the top of the window, as after a click on its background."""
        self.app.js("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0);")
        self.app.wait_until(lambda: self.focused() == "body", 5, "focus stayed on an element")

    def press(self, *keys) -> None:
        ActionChains(self.app.d).send_keys(*keys).perform()

    def test_tab_stops_to_the_message_box(self):
        start = time.monotonic()
        # Every Tab stop from the top to the message box.
        self.from_top()
        stops = []
        while len(stops) < 60:
            self.press(Keys.TAB)
            stops.append(self.focused())
            if stops[-1] == "composer-input":
                break
        self.assertEqual(stops[-1], "composer-input", f"never reached the message box: {stops}")
        self.assertEqual(stops[0], "skip-link", f"the first Tab stop is not the skip link: {stops}")
        rows = [s for s in stops if s == "conversation-open"]
        self.assertEqual(len(rows), 1, f"the 8 chat rows are not one Tab stop: {stops}")
        self.assertFalse({"rename-button", "delete-button"} & set(stops), f"a row's actions are Tab stops: {stops}")
        # Shown once focused (it sits off screen until then).
        self.from_top()
        self.press(Keys.TAB)
        link = self.app.one("skip-link")
        self.assertTrue(link.is_displayed() and link.rect["y"] >= 0, f"skip link not in sight when focused: {link.rect}")
        # Through the skip link: Tab, Enter, and the message box has the focus.
        self.press(Keys.ENTER)
        self.app.wait_until(lambda: self.focused() == "composer-input", 5,
                            lambda: f"Enter on the skip link focused {self.focused()}")
        via_link = 1
        self.assertLessEqual(via_link, 5)
        print(f"\nkeyboard: with 8 chats, {len(stops)} Tab stops to the message box by Tab alone "
              f"(was 36), {via_link} Tab + Enter through the skip link; stops: {stops} "
              f"({time.monotonic() - start:.1f} s)")

    def test_question_mark_opens_the_shortcuts_page(self):
        app = self.app
        # Typed in the message box, ? is text.
        box = app.compose("")
        box.send_keys("?")
        self.assertIsNone(app.one("shortcuts-dialog"), "? in the message box opened the shortcuts page")
        app.fill(box, "")
        # Elsewhere it opens the page; Esc closes it and the focus goes back.
        app.js("document.querySelector('[data-testid=\"settings-button\"]').focus()")
        self.press("?")
        dialog = app.wait_for("shortcuts-dialog", 5)
        rows = app.all("shortcut-row", within=dialog)
        self.assertGreaterEqual(len(rows), 10, "the shortcuts page lists too little")
        text = app.text(dialog)
        for words in ("New chat", "Search past chats", "Settings", "Send", "New line", "Skip to message box"):
            self.assertIn(words, text)
        app.screenshot("shortcuts-page")
        self.press(Keys.ESCAPE)
        app.wait_gone("shortcuts-dialog", 5)
        self.assertEqual(self.focused(), "settings-button", "the focus did not go back where it was")


if __name__ == "__main__":
    unittest.main()
