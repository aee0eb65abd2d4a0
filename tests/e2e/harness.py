"""Drives the real, built app through WebDriver (tauri-driver in front of WebKitWebDriver).

Needs an X display (scripts/e2e.sh runs everything under xvfb-run), the tools scripts/setup.sh
installs (tauri-driver in .deps/tools, Selenium and Pillow in the .deps/e2e venv, xdotool,
python3-gi), the app built (`cargo build -p confab-app` after `cd ui && npm run build`) and the
default model installed (setup puts it in the app's models folder).

Environment (all optional):
  CONFAB_E2E_APP          the app binary (default: $CARGO_TARGET_DIR or target, /debug/confab-app)
  CONFAB_E2E_MODEL        the default model file to link into each test's CONFAB_HOME
  CONFAB_E2E_SCREENSHOTS  where screenshots go (default target/e2e-screenshots)
  CONFAB_E2E_LOGS         where tauri-driver/app logs go (default target/e2e-logs)
  CONFAB_E2E_SLOW         multiplies every timeout (default 1; a busy machine wants 2 or 3)
  CONFAB_E2E_KEEP_HOME    1: keep each test class's CONFAB_HOME
"""
from __future__ import annotations

import io
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import warnings
from typing import Callable, Iterable, TypeVar

import urllib3.exceptions
from selenium import webdriver
from selenium.common.exceptions import (
    JavascriptException,
    NoSuchElementException,
    StaleElementReferenceException,
    WebDriverException,
)
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.common.options import ArgOptions
from selenium.webdriver.remote.webelement import WebElement

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent
DEPS = pathlib.Path(os.environ.get("CONFAB_DEPS_DIR") or ROOT / ".deps")
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
APP = pathlib.Path(os.environ.get("CONFAB_E2E_APP") or TARGET / "debug" / "confab-app")
TAURI_DRIVER = pathlib.Path(os.environ.get("CONFAB_E2E_TAURI_DRIVER") or DEPS / "tools" / "bin" / "tauri-driver")
SCREENSHOTS = pathlib.Path(os.environ.get("CONFAB_E2E_SCREENSHOTS") or ROOT / "target" / "e2e-screenshots")
LOGS = pathlib.Path(os.environ.get("CONFAB_E2E_LOGS") or ROOT / "target" / "e2e-logs")
SLOW = float(os.environ.get("CONFAB_E2E_SLOW") or 1)
# The GTK drag source runs on Debian's python3 (python3-gi); the venv shares its site-packages.
GTK_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

T = TypeVar("T")
# What a session request answered by a closed connection raises.
DROPPED_SESSION = (urllib3.exceptions.ProtocolError, ConnectionResetError)
# Selenium 4.40 warns about its own Remote(command_executor=URL) path.
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"selenium\..*")


def seconds(s: float) -> float:
    """A timeout, scaled for slow machines."""
    return s * SLOW


# ---------------------------------------------------------------------------------------------
# CONFAB_HOME


def default_model_manifest() -> dict:
    with open(ROOT / "assets" / "default-model.json") as f:
        return json.load(f)


def installed_default_model() -> pathlib.Path:
    """Where setup installed the default model: the app's models folder outside of tests
    (same rules as AppPaths::from_env in crates/engine/src/paths.rs)."""
    if os.environ.get("CONFAB_E2E_MODEL"):
        return pathlib.Path(os.environ["CONFAB_E2E_MODEL"])
    m = default_model_manifest()
    if os.environ.get("CONFAB_HOME"):
        models = pathlib.Path(os.environ["CONFAB_HOME"]) / "models"
    elif sys.platform == "darwin":
        models = pathlib.Path.home() / "Library" / "Application Support" / "Confab" / "models"
    else:
        data = os.environ.get("XDG_DATA_HOME") or str(pathlib.Path.home() / ".local" / "share")
        models = pathlib.Path(data) / "confab" / "models"
    return models / m["folder"] / m["file"]


def make_home(name: str, with_model: bool = True) -> pathlib.Path:
    """A fresh CONFAB_HOME with the installed default model linked in, so nothing downloads."""
    home = pathlib.Path(tempfile.mkdtemp(prefix=f"confab-e2e-{name}-"))
    if with_model:
        src = installed_default_model()
        m = default_model_manifest()
        if not src.is_file() or src.stat().st_size != m["size_bytes"]:
            raise unittest.SkipTest(f"default model not installed at {src}; run scripts/setup.sh")
        dest = home / "models" / m["folder"] / m["file"]
        dest.parent.mkdir(parents=True)
        dest.symlink_to(src)
    return home


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tail(text: str, lines: int) -> str:
    return "\n".join(text.splitlines()[-lines:])


def wait_port(port: int, timeout: float) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on port {port} after {timeout:.0f}s")


def descendants(pid: int) -> list[int]:
    """Process ids below `pid` (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text[text.rfind(")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        # A zombie counts as gone.
        return pathlib.Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except OSError:
        return False


def tid(testid: str, extra: str = "") -> str:
    """The CSS selector of a data-testid."""
    return f'[data-testid="{testid}"]{extra}'


# ---------------------------------------------------------------------------------------------
# The app



# Records the text length of every streaming reply at each change of the page, in
# window.__confabLengths[id], for watch_stream.
WATCH_LENGTHS_JS = """
// Records, for every reply while it streams, each text length the page shows: installed before
// a message is sent, because a short reply can stream within one WebDriver round trip.
if (!window.__confabWatching) {
  window.__confabWatching = true;
  window.__confabLengths = window.__confabLengths || {};
  const record = () => {
    for (const m of document.querySelectorAll('[data-testid="message"][data-status="streaming"]')) {
      if (!m.dataset.id) continue;  // drawn at Enter, before the reply has its id (and any text)
      const seen = window.__confabLengths[m.dataset.id] = window.__confabLengths[m.dataset.id] || [];
      const n = ((m.querySelector('[data-testid="message-content"]') || {}).textContent || '').length;
      if (seen[seen.length - 1] !== n) seen.push(n);
    }
  };
  new MutationObserver(record).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  record();
}
"""

class App:
    """One launch of the app: tauri-driver (with CONFAB_HOME in its environment, which the
    app inherits) and a Selenium session on it."""

    def __init__(self, home: pathlib.Path, app: pathlib.Path = APP, log_name: str = "app"):
        self.home = pathlib.Path(home)
        self.app = pathlib.Path(app)
        self.log_name = log_name
        self.driver: webdriver.Remote | None = None
        self.tauri_driver: subprocess.Popen | None = None
        self.launches = 0
        self.launched_at = 0.0  # time.monotonic() just before the session (and the app) started
        self.session_at = 0.0  # when the session was ready (the page loaded)
        self._pids: list[int] = []

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self, extra_env: dict[str, str] | None = None) -> "App":
        if not self.app.is_file():
            raise unittest.SkipTest(f"app not built: {self.app} (cargo build -p confab-app)")
        if not TAURI_DRIVER.is_file():
            raise unittest.SkipTest(f"tauri-driver missing: {TAURI_DRIVER} (scripts/setup.sh)")
        if not os.environ.get("DISPLAY"):
            raise unittest.SkipTest("no X display; run through scripts/e2e.sh (xvfb-run)")
        try:
            return self._launch(extra_env)
        except DROPPED_SESSION as e:
            # tauri-driver answers a session request its WebKitWebDriver dropped by dropping it
            # too (seen once in a cold CI run, on the launch after a killed app). Say what the
            # launch printed, then launch once more: a second drop fails the test.
            print(f"e2e: the session request was dropped ({e}); launch log {self.log_path}:\n"
                  f"{tail(self.log(), 40)}\ne2e: launching again", file=sys.stderr)
            self.quit()
            return self._launch(extra_env)

    def _launch(self, extra_env: dict[str, str] | None) -> "App":
        self.launches += 1
        LOGS.mkdir(parents=True, exist_ok=True)
        self.log_path = LOGS / f"{self.log_name}.{self.launches}.log"
        env = dict(os.environ, CONFAB_HOME=str(self.home), **(extra_env or {}))
        env.pop("WEBKIT_DISABLE_COMPOSITING_MODE", None)  # made screenshots hang
        env.pop("WEBKIT_DISABLE_DMABUF_RENDERER", None)
        port, native = free_port(), free_port()
        log = open(self.log_path, "wb")
        self.tauri_driver = subprocess.Popen(
            [str(TAURI_DRIVER), "--port", str(port), "--native-port", str(native)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        # tauri-driver forwards to WebKitWebDriver, which it starts: both must listen before the
        # session request, or tauri-driver answers it with a dropped connection.
        wait_port(port, seconds(20))
        wait_port(native, seconds(20))
        options = ArgOptions()
        options.set_capability("browserName", "wry")
        options.set_capability("tauri:options", {"application": str(self.app)})
        self.launched_at = time.monotonic()
        self.launched_epoch_ms = time.time() * 1000
        self.driver = webdriver.Remote(command_executor=f"http://127.0.0.1:{port}", options=options)
        self.session_at = time.monotonic()
        self._pids = descendants(self.tauri_driver.pid)
        self.driver.set_script_timeout(seconds(30))
        return self

    def quit(self) -> None:
        """Closes the session (WebKitWebDriver ends the app), then tauri-driver; anything left
        of what we started is killed by pid."""
        if self.driver is not None:
            try:
                self.driver.quit()
            except Exception:
                pass
            self.driver = None
        if self.tauri_driver is not None:
            pids = set(self._pids) | set(descendants(self.tauri_driver.pid))
            if self.tauri_driver.poll() is None:
                self.tauri_driver.terminate()
                try:
                    self.tauri_driver.wait(seconds(10))
                except subprocess.TimeoutExpired:
                    self.tauri_driver.kill()
                    self.tauri_driver.wait()
            end = time.monotonic() + seconds(10)
            while any(alive(p) for p in pids) and time.monotonic() < end:
                time.sleep(0.1)
            for p in pids:
                if alive(p):
                    try:
                        os.kill(p, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            self.tauri_driver = None

    def restart(self) -> "App":
        """Quits and starts again on the same CONFAB_HOME."""
        self.quit()
        return self.start()

    def app_pid(self) -> int | None:
        """The confab-app process under tauri-driver."""
        if self.tauri_driver is None:
            return None
        for pid in descendants(self.tauri_driver.pid):
            try:
                if os.readlink(f"/proc/{pid}/exe").endswith("/" + self.app.name):
                    return pid
            except OSError:
                continue
        return None

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except (OSError, AttributeError):
            return ""

    # -- DOM ------------------------------------------------------------------------------------

    @property
    def d(self) -> webdriver.Remote:
        assert self.driver is not None, "the app is not running"
        return self.driver

    def js(self, script: str, *args):
        return self.d.execute_script(script, *args)

    def all(self, testid: str, extra: str = "", within: WebElement | None = None) -> list[WebElement]:
        return (within or self.d).find_elements(By.CSS_SELECTOR, tid(testid, extra))

    def one(self, testid: str, extra: str = "", within: WebElement | None = None) -> WebElement | None:
        found = self.all(testid, extra, within)
        return found[0] if found else None

    def wait_until(self, what: Callable[[], T], timeout: float, message: str | Callable[[], str] = "",
                   poll: float = 0.1) -> T:
        """Polls `what` until it returns something truthy (returned), up to `timeout` (scaled)."""
        end = time.monotonic() + seconds(timeout)
        last_error: Exception | None = None
        while True:
            try:
                value = what()
                if value:
                    return value
            except (StaleElementReferenceException, NoSuchElementException, JavascriptException) as e:
                last_error = e
            if time.monotonic() > end:
                msg = message() if callable(message) else message
                raise AssertionError(
                    f"timed out after {seconds(timeout):.0f}s: {msg or what}"
                    + (f" (last error: {last_error})" if last_error else "")
                )
            time.sleep(poll)

    def wait_for(self, testid: str, timeout: float = 30, extra: str = "", visible: bool = True,
                 within: WebElement | None = None) -> WebElement:
        def found():
            for el in self.all(testid, extra, within):
                if not visible or el.is_displayed():
                    return el
            return None

        return self.wait_until(found, timeout, f"no {'visible ' if visible else ''}{tid(testid, extra)}")

    def wait_gone(self, testid: str, timeout: float = 30, extra: str = "") -> None:
        self.wait_until(lambda: not any(e.is_displayed() for e in self.all(testid, extra)), timeout,
                        f"{tid(testid, extra)} still shown")

    def click(self, testid: str, extra: str = "", timeout: float = 30) -> WebElement:
        el = self.wait_until(
            lambda: next((e for e in self.all(testid, extra) if e.is_displayed() and e.is_enabled()), None),
            timeout, f"no enabled {tid(testid, extra)}")
        el.click()
        return el

    def fill(self, el: WebElement | str, text: str) -> WebElement:
        """Replaces an input's value by typing (React sees real input events)."""
        if isinstance(el, str):
            el = self.wait_for(el)
        el.click()
        el.send_keys(Keys.CONTROL, "a")
        el.send_keys(Keys.BACKSPACE)
        if text:
            el.send_keys(text)
        return el

    def text(self, el: WebElement) -> str:
        return self.js("return arguments[0].textContent", el) or ""

    def attr(self, el: WebElement, name: str) -> str | None:
        return el.get_attribute(name)

    def body_text(self) -> str:
        return self.js("return document.body.innerText") or ""

    # -- screenshots ----------------------------------------------------------------------------

    def screenshot(self, name: str, element: WebElement | None = None, pad: int = 0) -> pathlib.Path:
        """Saves target/e2e-screenshots/<name>.png: the whole window as the X server shows it, or
        an element cropped out of it. From the screen rather than WebKitWebDriver: its element
        screenshots come back black, and without a GPU (the web view draws without compositing)
        its snapshot after a native drop never returns."""
        from PIL import Image, ImageGrab

        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        rect = self.d.get_window_rect()
        x, y = int(rect["x"]), int(rect["y"])
        window = ImageGrab.grab(bbox=(x, y, x + int(rect["width"]), y + int(rect["height"])), xdisplay=os.environ["DISPLAY"])
        buf = io.BytesIO()
        window.save(buf, "PNG")
        png = buf.getvalue()
        path = SCREENSHOTS / f"{name}.png"
        if element is None:
            path.write_bytes(png)
            return path

        rect = self.js(
            "const r = arguments[0].getBoundingClientRect();"
            "return [r.left, r.top, r.right, r.bottom, window.devicePixelRatio || 1]",
            element,
        )
        left, top, right, bottom, ratio = rect
        image = Image.open(io.BytesIO(png))
        box = (
            max(0, int(left * ratio) - pad),
            max(0, int(top * ratio) - pad),
            min(image.width, int(right * ratio) + pad),
            min(image.height, int(bottom * ratio) + pad),
        )
        image.crop(box).save(path)
        return path

    # -- native drag and drop -------------------------------------------------------------------

    def viewport_origin(self) -> tuple[int, int]:
        """Screen position of the page's (0, 0). Under Xvfb there is no window manager, hence no
        decorations: the window's position is the web view's."""
        rect = self.d.get_window_rect()
        return int(rect["x"]), int(rect["y"])

    def drop_files(self, files: Iterable[str | os.PathLike], target: WebElement | None = None,
                   timeout: float = 30) -> list[str]:
        """Drops files on the window (or on `target`) the way a file manager does: a GTK drag
        source offers them as text/uri-list, xdotool presses on it, moves onto the app in steps
        and releases. Returns the drag source's report lines (READY..., DATA-GET, DRAG-END)."""
        files = [str(f) for f in files]
        wx, wy = self.viewport_origin()
        if target is None:
            w, h = self.js("return [window.innerWidth, window.innerHeight]")
            tx, ty = wx + w // 2, wy + h // 2
        else:
            cx, cy = self.js(
                "const r = arguments[0].getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]",
                target,
            )
            tx, ty = wx + int(cx), wy + int(cy)
        width, _ = screen_size()
        # Beside the app's window, at the screen's right edge.
        source = subprocess.Popen(
            [GTK_PYTHON, str(HERE / "drag_source.py"), "--x", str(width - 130), "--y", "10",
             "--timeout", str(seconds(timeout)), *files],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        lines: list[str] = []
        try:
            line = source.stdout.readline().strip()
            lines.append(line)
            if not line.startswith("READY"):
                raise AssertionError(f"drag source did not start: {line} {source.stdout.read()}")
            sx, sy, sw, sh = map(int, line.split()[1:])
            start = (sx + sw // 2, sy + sh // 2)
            xdotool("mousemove", *start)
            time.sleep(0.2)
            xdotool("mousedown", "1")
            time.sleep(0.2)
            # Past GTK's drag threshold first, then across in steps so XDND sees motion.
            steps = 25
            for i in range(1, steps + 1):
                x = start[0] + (tx - start[0]) * i // steps
                y = start[1] + (ty - start[1]) * i // steps
                xdotool("mousemove", x, y)
                time.sleep(0.04)
            for dx in (2, -2, 0):  # a little wiggle on the target: some toolkits want motion there
                xdotool("mousemove", tx + dx, ty)
                time.sleep(0.1)
            xdotool("mouseup", "1")
            out, _ = source.communicate(timeout=seconds(timeout))
            lines += [l.strip() for l in out.splitlines() if l.strip()]
        finally:
            if source.poll() is None:
                source.kill()
                source.wait()
        return lines



# ---------------------------------------------------------------------------------------------
# The chat UI, in terms of its data-testids


MESSAGES_JS = """
return Array.from(document.querySelectorAll('[data-testid="message"]')).map(m => {
  const q = (t) => m.querySelector('[data-testid="' + t + '"]');
  return {
    id: m.dataset.id, role: m.dataset.role, status: m.dataset.status,
    text: (q('message-content') || {}).textContent || '',
    position: (q('sibling-position') || {}).textContent || null,
    stats: !!q('reply-stats'),
  };
});
"""


class ChatApp(App):
    """The app, with the chat UI's actions (data-testids as in the UI's components)."""

    MODEL_READY_TIMEOUT = 300
    REPLY_TIMEOUT = 300

    def model_state(self) -> str | None:
        el = self.one("model-status")
        return el.get_attribute("data-state") if el else None

    def wait_model_ready(self, timeout: float | None = None) -> WebElement:
        def ready():
            state = self.model_state()
            if state == "error":
                raise AssertionError(f"model failed to load: {self.text(self.one('model-status'))}")
            return self.one("model-status", '[data-state="ready"]')

        return self.wait_until(ready, timeout or self.MODEL_READY_TIMEOUT,
                               lambda: f"model not ready (model-status data-state={self.model_state()})", poll=0.25)

    def messages(self) -> list[dict]:
        return self.js(MESSAGES_JS)

    def last(self, role: str) -> dict | None:
        found = [m for m in self.messages() if m["role"] == role]
        return found[-1] if found else None

    def message_el(self, message_id: str) -> WebElement:
        return self.wait_for("message", extra=f'[data-id="{message_id}"]')

    def new_chat(self) -> None:
        self.click("new-chat")
        self.wait_until(lambda: not self.messages(), 30, "new chat still shows messages")
        composer = self.wait_for("composer-input")
        self.wait_until(lambda: composer.get_attribute("value") == "", 10, "composer not empty in a new chat")

    def open_conversation(self, conversation_id: str, timeout: float = 30) -> int:
        """Clicks a conversation in the sidebar until its messages show; returns the clicks that
        landed (more than one is worth a look: a click that did nothing)."""
        end = time.monotonic() + seconds(timeout)
        clicks, refused = 0, []
        while True:
            item = self.wait_for("conversation-item", timeout, extra=f'[data-id="{conversation_id}"]')
            # The row's open button (the title is inside it).
            target = next(iter(item.find_elements(By.CSS_SELECTOR, "button:not([data-testid])")), None) or item
            try:
                target.click()
                clicks += 1
                self.wait_until(lambda: self.messages(), 5)
                return clicks
            except (WebDriverException, AssertionError) as e:
                refused.append(type(e).__name__)
                if time.monotonic() > end:
                    raise AssertionError(f"conversation {conversation_id} did not open: {clicks} clicks landed, "
                                         f"attempts failed with {refused}; messages shown: {self.messages()}")
                time.sleep(0.3)

    def current_conversation(self) -> str | None:
        """The data-id of the sidebar's selected conversation (aria-current)."""
        return self.js("const i = document.querySelector('[data-testid=\"conversation-item\"][aria-current=\"true\"]');"
                       "return i ? i.dataset.id : null")

    def compose(self, text: str) -> WebElement:
        composer = self.wait_for("composer-input")
        self.wait_until(composer.is_enabled, 30, "composer disabled")
        return self.fill(composer, text)

    def paste(self, text: str) -> WebElement:
        """Puts `text` in the message box at once, as a paste does (typing a long text key by key
        would take minutes): one input event that React sees."""
        composer = self.wait_for("composer-input")
        self.js("const box = arguments[0];"
                "Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set.call(box, arguments[1]);"
                "box.dispatchEvent(new Event('input', { bubbles: true }));", composer, text)
        return composer

    def send(self, text: str, timeout: float = 60) -> tuple[dict, dict]:
        """Sends `text`; returns (user message, assistant reply) as the UI shows them once the
        reply has started."""
        before = {m["id"] for m in self.messages()}
        self.compose(text)
        self.d.execute_script(WATCH_LENGTHS_JS)
        self.click("send-button", timeout=timeout)
        return self.wait_new_reply(before, timeout)

    def wait_new_reply(self, before: set, timeout: float = 60) -> tuple[dict | None, dict]:
        def started():
            new = [m for m in self.messages() if m["id"] not in before and m["id"]]
            replies = [m for m in new if m["role"] == "assistant"]
            if replies:
                users = [m for m in new if m["role"] == "user"]
                return (users[-1] if users else None, replies[-1])
            return None

        return self.wait_until(started, timeout, "no new reply appeared")

    def wait_reply(self, reply_id: str, timeout: float | None = None) -> dict:
        """Waits until the reply is no longer streaming; returns it."""
        def done():
            for m in self.messages():
                if m["id"] == reply_id and m["status"] != "streaming":
                    return m
            return None

        return self.wait_until(done, timeout or self.REPLY_TIMEOUT, f"reply {reply_id} still streaming", poll=0.25)

    def watch_stream(self, reply_id: str, timeout: float | None = None,
                     until: Callable[[dict], bool] | None = None) -> tuple[dict, list[int]]:
        """Polls the reply while it streams; returns it when it ends (or when `until(reply)`) and
        the text lengths seen while data-status was streaming."""
        lengths: list[int] = []
        # Every draw is also recorded in the page (a short reply can stream between two polls);
        # `send` installed the recorder already, for replies that start some other way it is now.
        self.d.execute_script(WATCH_LENGTHS_JS)
        end = time.monotonic() + seconds(timeout or self.REPLY_TIMEOUT)
        while True:
            reply = next((m for m in self.messages() if m["id"] == reply_id), None)
            if reply is not None:
                if reply["status"] == "streaming":
                    if not lengths or lengths[-1] != len(reply["text"]):
                        lengths.append(len(reply["text"]))
                    if until and until(reply):
                        return reply, lengths
                else:
                    seen = self.d.execute_script("return (window.__confabLengths || {})[arguments[0]] || [];", reply_id)
                    return reply, seen if len(seen) >= len(lengths) else lengths
            if time.monotonic() > end:
                raise AssertionError(f"reply {reply_id} still streaming after {seconds(timeout or self.REPLY_TIMEOUT):.0f}s")
            time.sleep(0.05)

    def stop_at(self, reply_id: str, chars: int, timeout: float = 60) -> None:
        """Clicks Stop from inside the page once the streaming reply shows `chars` characters: a
        tiny model writes hundreds of tokens a second, faster than WebDriver round trips."""
        self.d.set_script_timeout(seconds(timeout))
        shown = self.d.execute_async_script("""
            const [id, chars, done] = arguments;
            const tick = () => {
              const m = document.querySelector('[data-testid="message"][data-id="' + id + '"]');
              const text = (m && m.querySelector('[data-testid="message-content"]') || {}).textContent || '';
              const stop = document.querySelector('[data-testid="stop-button"]');
              if (m && m.dataset.status !== 'streaming') done(-1);
              else if (text.length >= chars && stop) { stop.click(); done(text.length); }
              else setTimeout(tick, 5);
            };
            tick();""", reply_id, chars)
        if shown < 0:
            raise AssertionError(f"reply {reply_id} ended before it showed {chars} characters")

    def hover(self, el: WebElement) -> None:
        from selenium.webdriver.common.action_chains import ActionChains

        try:
            ActionChains(self.d).move_to_element(el).perform()
        except WebDriverException:
            pass

    def click_in_message(self, message_id: str, testid: str, timeout: float = 30) -> None:
        """Clicks an action of a message (hovering it first, as actions may show on hover)."""
        def ready():
            msg = self.message_el(message_id)
            self.hover(msg)
            button = self.one(testid, within=msg)
            return button if button is not None and button.is_enabled() else None

        button = self.wait_until(ready, timeout, f"no enabled {testid} in message {message_id}")
        try:
            button.click()
        except WebDriverException:
            # Shown only on hover and the pointer moved on: a DOM click does the same.
            self.js("arguments[0].click()", button)

    def position(self, message_id: str) -> str | None:
        return next((m["position"] for m in self.messages() if m["id"] == message_id), None)

    # -- settings -------------------------------------------------------------------------------

    def open_settings(self) -> WebElement:
        if not self.one("settings-pane") or not self.one("settings-pane").is_displayed():
            self.click("settings-button")
        return self.wait_for("settings-pane")

    def close_settings(self) -> None:
        pane = self.one("settings-pane")
        if pane is not None and pane.is_displayed():
            close = self.one("settings-close")
            if close is not None and close.is_displayed():
                close.click()
            else:
                pane.send_keys(Keys.ESCAPE)
        self.wait_gone("settings-pane", 10)

    def setting(self, name: str) -> WebElement:
        return self.wait_for(f"setting-{name}")

    def set_settings(self, **values) -> None:
        """Opens settings, sets each field (theme through its select), saves and closes."""
        from selenium.webdriver.support.ui import Select

        self.open_settings()
        for name, value in values.items():
            el = self.setting(name)
            if el.tag_name.lower() == "select":
                Select(el).select_by_value(str(value))
            elif el.get_attribute("type") == "checkbox":
                if el.is_selected() != bool(value):
                    el.click()
            else:
                self.fill(el, "" if value is None else str(value))
        self.click("settings-save")
        # Saving closes the pane; a refused value shows an error-banner in it instead.

        def outcome():
            pane = self.one("settings-pane")
            if pane is None or not pane.is_displayed():
                return "saved"
            error = self.one("error-banner", within=pane)
            return f"error: {self.text(error)}" if error is not None and error.is_displayed() else None

        result = self.wait_until(outcome, 30, "settings pane neither closed nor showed an error after save")
        if result != "saved":
            raise AssertionError(f"saving settings {values} failed: {result}")

    def theme(self) -> str | None:
        return self.js("return document.documentElement.dataset.theme || null")

    # -- banners --------------------------------------------------------------------------------

    def banners(self, testid: str) -> list[str]:
        return [self.text(e).strip() for e in self.all(testid) if e.is_displayed()]

    def dismiss(self, testid: str) -> None:
        """Closes the banners of a kind (their button), so that the next one is new."""
        for el in self.all(testid):
            try:
                if el.is_displayed():
                    for button in el.find_elements(By.CSS_SELECTOR, "button"):
                        button.click()
                        break
            except WebDriverException:
                pass

    def wait_banner(self, testid: str, before: list[str], timeout: float = 30) -> str:
        """Waits for a banner of the kind whose text is not among `before`; returns its text."""
        def new():
            return next((t for t in self.banners(testid) if t and t not in before), None)

        return self.wait_until(new, timeout, lambda: f"no new {testid}; shown: {self.banners(testid)}; "
                                                     f"notices: {self.banners('notice')}; errors: {self.banners('error-banner')}")


def xdotool(*args) -> str:
    return subprocess.run(["xdotool", *map(str, args)], check=True, capture_output=True, text=True).stdout


def screen_size() -> tuple[int, int]:
    out = xdotool("getdisplaygeometry").split()
    return int(out[0]), int(out[1])


# ---------------------------------------------------------------------------------------------
# Test cases


class AppTestCase(unittest.TestCase):
    """One fresh CONFAB_HOME and one app per test class; tests in a class share it (named
    test_NN_... where order matters, as unittest runs them sorted)."""

    app: ChatApp
    home: pathlib.Path
    with_model = True
    # Extra environment for the app (it inherits tauri-driver's).
    app_env: dict[str, str] = {}
    # Model folders linked into the home's models folder by name (fixtures the picker lists).
    extra_models: dict[str, pathlib.Path] = {}

    @classmethod
    def setUpClass(cls):
        cls.home = make_home(cls.__name__, cls.with_model)
        for name, folder in cls.extra_models.items():
            (cls.home / "models" / name).symlink_to(folder, target_is_directory=True)
        cls.app = ChatApp(cls.home, log_name=cls.__name__)
        try:
            cls.app.start(cls.app_env)
        except BaseException:
            cls.app.quit()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.app.quit()
        if os.environ.get("CONFAB_E2E_KEEP_HOME") != "1":
            shutil.rmtree(cls.home, ignore_errors=True)

    def run(self, result=None):
        # A failing test leaves a screenshot of the window behind.
        before = len(result.failures) + len(result.errors) if result else 0
        out = super().run(result)
        if result and len(result.failures) + len(result.errors) > before:
            # CI keeps only what the run printed: the end of the launch's log says what the app did.
            print(f"e2e: {self.id()} failed; launch log {getattr(self.app, 'log_path', None)}:\n"
                  f"{tail(self.app.log(), 30)}", file=sys.stderr)
            if self.app.driver is not None:
                try:
                    self.app.screenshot(f"FAILED-{self.id().split('.', 1)[-1]}")
                except Exception:
                    pass
        return out
