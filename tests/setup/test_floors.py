"""The floors below the front doors never speak the front doors' words (issue 54).

The engine, media, documents, store, hub, remote, MCP, paths, log and MLX crates say what went
wrong and what to change as facts, in neutral words; the app names its panes, the command line
and `confab serve` their flags, the server its routes. This test fails when a source line of a
lower crate names
- a place in the app: a Settings pane path ("Settings › Model"), "in Settings", "Get models",
  "the model menu";
- one of confab's command-line flags (read from the clap definitions in crates/cli: every
  `#[arg(long ...)]` field) or subcommands (`confab serve`, read from its `Command` enum);
- an HTTP route of confab's server (read from the `.route("...")` calls in crates/server), or
  any `/v1/` path.

Allowed: comments (`//` and `///` lines: they explain, a person never sees them), `#[cfg(test)]`
modules and the files only they declare (tests may name anything), and the settings of other
apps that messages send people to (`FOREIGN`: an iPhone's Settings › Camera).
"""

import pathlib
import re
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CRATES = ROOT / "crates"
LOWER = ["engine", "media", "documents", "store", "hub", "remote", "mcp", "paths", "log", "mlx-sys"]
SKIPPED = [CRATES / "mlx-sys" / "upstream"]

# Places in other apps' settings, which a message may name.
FOREIGN = [re.compile(r"iPhone: Settings › Camera")]

APP_PLACES = [
    re.compile(r"(?<!System )\bSettings\s*(?:›|\s>)"),
    re.compile(r"\b(?:in|or) Settings\b"),
    re.compile(r"\bGet models\b"),
    re.compile(r"\bmodel menu\b"),
]


def _kebab(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


def cli_flags():
    """`--name` for every long option the CLI's clap definitions declare."""
    flags = set()
    for path in (CRATES / "cli" / "src").rglob("*.rs"):
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            attribute = re.search(r"#\[arg\((.*)\)\]", line)
            if not attribute or not re.search(r"\blong\b", attribute.group(1)):
                continue
            named = re.search(r'\blong\s*=\s*"([^"]+)"', attribute.group(1))
            if named:
                flags.add(named.group(1))
                continue
            # The field the attribute is on: the next line that is not an attribute or a comment.
            for field in lines[i + 1:]:
                stripped = field.strip()
                if stripped.startswith(("#[", "//")):
                    continue
                found = re.match(r"(?:pub(?:\([^)]*\))?\s+)?([a-z_][a-z0-9_]*)\s*:", stripped)
                if found:
                    flags.add(found.group(1).replace("_", "-"))
                break
    return sorted(flags)


def cli_commands():
    """The CLI's subcommands, as typed (`confab export-tokenizer`)."""
    source = (CRATES / "cli" / "src" / "main.rs").read_text()
    body = re.search(r"enum Command \{(.*?)\n\}", source, re.S)
    return sorted(_kebab(name) for name in re.findall(r"^\s*([A-Z]\w*)\(", body.group(1), re.M)) if body else []


def server_routes():
    """The server's routes under /v1, up to their first path parameter."""
    routes = set()
    for path in (CRATES / "server" / "src").rglob("*.rs"):
        for route in re.findall(r'\.route\(\s*"(/v1/[^"]*)"', path.read_text()):
            routes.add(route.split("{")[0].rstrip("/"))
    return sorted(routes)


def _test_only_files(path, lines):
    """Files declared by `#[cfg(test)] mod name;` in `path`."""
    declared = []
    for i, line in enumerate(lines):
        found = re.match(r"\s*(?:pub(?:\([^)]*\))?\s+)?mod (\w+);", line)
        if found and i > 0 and lines[i - 1].strip() == "#[cfg(test)]":
            folder = path.parent if path.name in ("mod.rs", "lib.rs", "main.rs") else path.parent / path.stem
            declared += [folder / f"{found.group(1)}.rs", folder / found.group(1) / "mod.rs"]
    return declared


def shipped_lines(path, lines):
    """(number, line) of the lines that ship: not comments, not in a `#[cfg(test)]` module."""
    skip_until = None
    after_cfg_test = False
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if skip_until is not None:
            if line == skip_until:
                skip_until = None
            continue
        if stripped == "#[cfg(test)]":
            after_cfg_test = True
            continue
        if after_cfg_test:
            module = re.match(r"(\s*)(?:pub(?:\([^)]*\))?\s+)?mod \w+ \{$", line)
            if module:
                # rustfmt closes a module at its own indentation.
                skip_until = module.group(1) + "}"
                after_cfg_test = False
                continue
            if not stripped.startswith("#["):
                after_cfg_test = False
        if stripped.startswith("//"):
            continue
        yield number, line


def lower_sources():
    for crate in LOWER:
        source = CRATES / crate / "src"
        if source.is_dir():
            yield from (p for p in sorted(source.rglob("*.rs")) if not any(p.is_relative_to(s) for s in SKIPPED))


def front_door_words():
    """(what, pattern) for every word a lower crate may not say."""
    words = [(f"the app's {p.pattern!r}", p) for p in APP_PLACES]
    for flag in cli_flags():
        words.append((f"the CLI flag --{flag}", re.compile(rf"(?<![\w-])--{re.escape(flag)}(?![\w-])")))
    for command in cli_commands():
        words.append((f"the command `confab {command}`", re.compile(rf"\bconfab {re.escape(command)}\b")))
    for route in server_routes():
        words.append((f"the route {route}", re.compile(rf"{re.escape(route)}(?![\w-])")))
    words.append(("an HTTP route under /v1/", re.compile(r"/v1/")))
    return words


def findings():
    words = front_door_words()
    test_only = set()
    sources = list(lower_sources())
    for path in sources:
        test_only.update(_test_only_files(path, path.read_text().splitlines()))
    found = []
    for path in sources:
        if path in test_only:
            continue
        lines = path.read_text().splitlines()
        for number, line in shipped_lines(path, lines):
            text = line
            for foreign in FOREIGN:
                text = foreign.sub("", text)
            for what, pattern in words:
                if pattern.search(text):
                    found.append(f"{path.relative_to(ROOT)}:{number}: names {what}: {line.strip()}")
    return found


class FloorsTest(unittest.TestCase):
    def test_the_words_are_read_from_the_front_doors(self):
        # The lists come from the CLI's and the server's own definitions; an empty one would
        # let everything through.
        flags = cli_flags()
        for flag in ["kv-bits", "memory-budget", "draft-model", "max-tokens", "file"]:
            self.assertIn(flag, flags)
        self.assertIn("serve", cli_commands())
        self.assertIn("doctor", cli_commands())
        self.assertIn("/v1/chat/completions", server_routes())

    def test_lower_crates_never_name_a_pane_a_flag_or_a_route(self):
        found = findings()
        self.assertEqual(
            found,
            [],
            "crates below the front doors say what to change as a fact (e.g. confab_engine::Remedy); "
            "the app, the CLI and the server name their own panes, flags and routes:\n" + "\n".join(found),
        )

    def test_test_modules_and_comments_are_not_read(self):
        lines = [
            "/// Set in Settings › Model (--kv-bits).",
            'const A: &str = "x";',
            "#[cfg(test)]",
            "mod tests {",
            '    const B: &str = "Settings › Model";',
            "}",
            'const C: &str = "y";',
        ]
        shipped = [line for _, line in shipped_lines(pathlib.Path("x.rs"), lines)]
        self.assertEqual(shipped, ['const A: &str = "x";', 'const C: &str = "y";'])


if __name__ == "__main__":
    unittest.main()
