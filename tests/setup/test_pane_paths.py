"""Every place in Settings that a message or a doc sends people to exists in the window (issue 55).

Errors, doc comments, the docs and the UI's own strings name places in the settings dialog as
paths: "Settings › Advanced › About", "Settings › Storage › Memory for replies" (or with ">").
The panes are read from the one place the window defines them, `groups` in
ui/src/components/SettingsPane.tsx; what each pane holds (its headings, field labels, buttons,
and those of the components it renders) from that pane's `<section>` there. A path's first step
must be a pane, and each later step a heading, label or button shown in that pane (the order
within the pane is not checked). A path that starts at a pane without "Settings" ("Advanced ›
About") is checked the same way. Other apps' settings (macOS's System Settings, an iPhone's, Jan's)
are not Confab's and are skipped: `FOREIGN`."""

import pathlib
import re
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
UI = ROOT / "ui" / "src"
SETTINGS_PANE = UI / "components" / "SettingsPane.tsx"

# Where paths are named: the Rust crates, the app, the docs, the window's source.
SCANNED = [
    (ROOT / "crates", (".rs", ".md")),
    (ROOT / "src-tauri" / "src", (".rs",)),
    (ROOT / "docs", (".md",)),
    (ROOT / "README.md", (".md",)),
    (UI, (".ts", ".tsx", ".css")),
]
SKIPPED = [ROOT / "crates" / "mlx-sys" / "upstream"]

# Settings of other apps that the docs and messages tell people to use, by their first step.
FOREIGN = {
    "Camera": "an iPhone's Settings app (recording videos as H.264)",
    "MCP Servers": "Jan's settings (docs/tools.md compares how other apps add MCP servers)",
}

SEPARATOR = re.compile(r"\s*(?:›|(?<=\s)>)\s*")
# "Settings" then "›" (or " > "), not macOS's "System Settings".
SETTINGS_START = re.compile(r"(?<!System )\bSettings(?:\s*›|\s+>)\s*")
WORDS = re.compile(r"[\w'&…-]+(?: [\w'&…-]+){0,3}")


def _panes_and_source():
    source = SETTINGS_PANE.read_text()
    found = re.search(r"const groups = \[([^\]]*)\] as const;", source)
    if not found:
        raise AssertionError(f"{SETTINGS_PANE.relative_to(ROOT)}: no `const groups = [...] as const;` to read the panes from")
    return re.findall(r"'([^']+)'", found.group(1)), source


def _function_body(source, name):
    """A component defined in the same file: from `function Name(` to the next top-level one."""
    start = re.search(rf"^(?:export )?function {name}\b", source, re.M)
    if not start:
        return None
    end = re.search(r"^(?:export )?(?:function|const|interface|type) ", source[start.end():], re.M)
    return source[start.start(): start.end() + end.start() if end else len(source)]


def _component_source(name, source, folder):
    """A component that a piece of the pane renders, and its file's source: defined in the same
    file, or in the file it is imported from."""
    body = _function_body(source, name)
    if body is not None:
        return body, source, folder
    imported = re.search(rf"import \{{[^}}]*\b{name}\b[^}}]*\}} from '(\.[^']+)'", source)
    if imported:
        for ext in (".tsx", ".ts"):
            path = (folder / (imported.group(1) + ext)).resolve()
            if path.is_file():
                text = path.read_text()
                return _function_body(text, name) or text, text, path.parent
    return "", "", folder


def _shown_names(chunk):
    """Headings, labels and button texts in a piece of JSX."""
    names = re.findall(r"<h[2-5][^>]*>\s*([^<{]+?)\s*</h[2-5]>", chunk)
    names += [a or b or c for a, b, c in re.findall(r"\blabel=(?:\"([^\"]+)\"|\{'([^']+)'\}|\{`([^`]+)`\})", chunk)]
    names += re.findall(r"<button\b[^>]*>\s*(?:<Icon [^>]*/>\s*)?([A-Z][^<>{}]*?)\s*</button>", chunk, re.S)
    return names


def _stems(name):
    """How a path may name a label: "Memory for replies (%)" as "Memory for replies",
    `Keys and values of ${model}` as "Keys and values"."""
    stem = re.split(r"\$\{| \(", name)[0].strip()
    stems = {stem}
    if "${" in name:
        stems.add(re.sub(r"\s+(?:of|for|in|on)$", "", stem))
    return {s for s in stems if s}


def settings_map():
    """{pane: the names that pane shows}, read from SettingsPane.tsx."""
    panes, source = _panes_and_source()
    fields = re.findall(r"\{\s*group:\s*'(\w+)'(.*?)\}", source, re.S)
    shown = {}
    for pane in panes:
        section = re.search(rf"<section id=\{{groupId\('{pane}'\)\}}(.*?)</section>", source, re.S)
        if not section:
            raise AssertionError(f"{SETTINGS_PANE.relative_to(ROOT)}: no <section> for the pane {pane!r}")
        names = []
        chunks, seen = [(section.group(1), source, SETTINGS_PANE.parent)], set()
        while chunks:
            chunk, file_source, folder = chunks.pop()
            names += _shown_names(chunk)
            for tag in re.findall(r"<([A-Z]\w*)", chunk):
                if tag not in seen:
                    seen.add(tag)
                    chunks.append(_component_source(tag, file_source, folder))
        names += [label for group, body in fields if group == pane for label in re.findall(r"label:\s*'([^']+)'", body)]
        shown[pane] = {stem for name in names for stem in _stems(name)}
    return shown


def _step(text, names):
    """The longest of `names` that `text` starts with, as a whole word."""
    for name in sorted(names, key=len, reverse=True):
        if text.startswith(name) and not re.match(r"[\w]", text[len(name):len(name) + 1]):
            return name
    return None


def _as_written(rest):
    """The steps of a path as written, for the message: "Runtime › Copy diagnostics"."""
    steps = []
    while written := WORDS.match(rest):
        steps.append(written.group(0))
        rest = rest[written.end():]
        sep = SEPARATOR.match(rest)
        if not sep or not rest[sep.end():sep.end() + 1].isupper():
            break
        rest = rest[sep.end():]
    return " › ".join(steps) or rest[:20]


def check_text(text, shown, within=None):
    """The wrong paths that start in `text[:within]` (a line, with the next one after it): a
    list of (path as written, why)."""
    wrong = []
    starts = [m.end() for m in SETTINGS_START.finditer(text)]
    # A path from a pane, "Advanced › About", not a later step of one.
    bare = re.compile(r"(?<![\w-])(?=(?:" + "|".join(map(re.escape, shown)) + r")\s*›)")
    starts += [m.start() for m in bare.finditer(text) if not re.search(r"(?:›|>)\s*$", text[:m.start()])]
    for at in starts:
        if within is not None and at >= within:
            continue
        rest = text[at:]
        if any(rest.startswith(other) for other in FOREIGN):
            continue
        pane = _step(rest, shown)
        if pane is None:
            wrong.append((f"Settings › {_as_written(rest)}", f"no such pane; the panes are {', '.join(shown)}"))
            continue
        path, rest = [pane], rest[len(pane):]
        while (sep := SEPARATOR.match(rest)) and rest[sep.end():sep.end() + 1].isupper():
            rest = rest[sep.end():]
            step = _step(rest, shown[pane])
            if step is None:
                wrong.append((" › ".join(["Settings", *path, _as_written(rest)]),
                              f"the {pane} pane shows no heading, label or button of that name"))
                break
            path.append(step)
            rest = rest[len(step):]
    return wrong


def _files():
    for place, exts in SCANNED:
        paths = [place] if place.is_file() else sorted(place.rglob("*"))
        for path in paths:
            if path.suffix in exts and path.is_file() and "node_modules" not in path.parts \
                    and not any(skip in path.parents for skip in SKIPPED):
                yield path


def _joined_lines(text):
    """Each line, its length, and the line with the next one after it, for a path that goes on
    there (wrapped prose or a wrapped comment)."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        following = re.sub(r"^\s*(?:///?!?|\*|#|<!--)?\s*", "", lines[i + 1]) if i + 1 < len(lines) else ""
        yield i + 1, len(line), line.rstrip() + " " + following


def wrong_paths():
    shown = settings_map()
    found = []
    for path in _files():
        text = path.read_text(errors="replace")
        if "›" not in text and not re.search(r"Settings\s+>", text):
            continue
        for number, length, line in _joined_lines(text):
            for written, why in check_text(line, shown, within=length):
                found.append(f"{path.relative_to(ROOT)}:{number}: {written!r}: {why}")
    return found


class PanePaths(unittest.TestCase):
    def test_every_named_settings_path_exists_in_the_window(self):
        wrong = wrong_paths()
        self.assertEqual(wrong, [], "paths into Settings that the window does not have:\n" + "\n".join(wrong))

    def test_the_panes_are_read_from_the_settings_pane(self):
        shown = settings_map()
        self.assertIn("Advanced", shown)
        for name in ("Local server", "Remote providers", "About", "Copy diagnostics"):
            self.assertIn(name, shown["Advanced"])
        self.assertIn("Memory for replies", shown["Storage"])
        self.assertIn("Keys and values", shown["Model"])
        self.assertIn("Speculative decoding", shown["Model"])
        self.assertNotIn("Runtime", shown)

    def test_a_wrong_path_fails(self):
        shown = settings_map()
        wrong = lambda text: [written for written, _ in check_text(text, shown)]  # noqa: E731
        self.assertEqual(wrong("with the diagnostics (Settings › Runtime › Copy diagnostics)."), ["Settings › Runtime › Copy diagnostics"])
        self.assertEqual(wrong("(`--memory-budget`, Settings › Performance): this"), ["Settings › Performance"])
        self.assertEqual(wrong("Check the key in Settings > Remote providers."), ["Settings › Remote providers"])
        self.assertEqual(wrong("Settings › Model › Draft size"), ["Settings › Model › Draft size"])
        self.assertEqual(wrong("it is Advanced › Diagnostics"), ["Settings › Advanced › Diagnostics"])
        for right in (
            "Settings › Advanced › About › Copy diagnostics",
            "the limit in Settings › Tools, so it",
            "Settings › Storage › Memory for replies allows",
            "*Settings › Model › Keys and values* (kept",
            "Settings › Model › Draft model",
            "on macOS: System Settings › Privacy & Security › Microphone",
            "on an iPhone: Settings › Camera › Formats › Most Compatible",
            "Mutex<Settings> x",
        ):
            self.assertEqual(wrong(right), [], right)


if __name__ == "__main__":
    unittest.main()
