"""The floors of docs/architecture.md, and its rules each in one file.

A crate imports only crates on its floor or below (front doors → chat turn → engine → leaves),
and the rules the table names are written once: the string or call that makes each rule appears
in its one file and nowhere else above the engine (tests and comments aside)."""
import pathlib
import re
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]

FLOORS = {
    "confab-app": 3, "confab-server": 3, "confab-cli": 3,
    # The fuzz targets drive every floor's parsers, the server's as a front door does.
    "confab-fuzz": 3,
    "confab-turn": 2,
    "confab-engine": 1,
    # Leaves: they decode, read, keep and fetch; none knows a model runs.
    "confab-media": 0, "confab-documents": 0, "confab-store": 0, "confab-hub": 0, "confab-remote": 0,
    "confab-mcp": 0, "confab-secrets": 0, "confab-paths": 0, "confab-log": 0, "confab-limits": 0,
}
# Front doors that may stand on another: the app and the CLI start the server.
ALLOWED_SIDEWAYS = {("confab-app", "confab-server"), ("confab-cli", "confab-server"), ("confab-fuzz", "confab-server")}

ABOVE_THE_ENGINE = ["src-tauri/src", "crates/server/src", "crates/cli/src", "crates/turn/src"]


def manifests():
    for path in [ROOT / "src-tauri/Cargo.toml", *sorted((ROOT / "crates").glob("*/Cargo.toml"))]:
        text = path.read_text()
        name = re.search(r'^name = "([^"]+)"', text, re.M).group(1)
        dependencies = text.split("[dependencies]", 1)[-1].split("\n[", 1)[0]
        yield path, name, re.findall(r"^(confab-[a-z-]+)\s*=", dependencies, re.M)


def code_lines(folders):
    """(file, line number, line) of non-test code: a file up to its `#[cfg(test)]` module,
    comment lines left out."""
    for folder in folders:
        where = ROOT / folder
        for path in [where] if where.is_file() else sorted(where.rglob("*.rs")):
            text = path.read_text()
            text = text.split("#[cfg(test)]", 1)[0]
            for number, line in enumerate(text.splitlines(), 1):
                if not line.lstrip().startswith("//"):
                    yield path.relative_to(ROOT).as_posix(), number, line


def places(needle, folders=ABOVE_THE_ENGINE):
    return sorted({file for file, _, line in code_lines(folders) if needle in line})


class Floors(unittest.TestCase):
    def test_every_crate_has_a_floor(self):
        for path, name, _ in manifests():
            if name.startswith("confab-"):
                self.assertIn(name, FLOORS, f"{path}: put {name} on a floor in docs/architecture.md and here")

    def test_no_crate_imports_a_floor_above_it(self):
        for path, name, dependencies in manifests():
            for dependency in dependencies:
                if (name, dependency) in ALLOWED_SIDEWAYS:
                    continue
                below = FLOORS[dependency] < FLOORS[name] or (FLOORS[name] == 0 and dependency != name)
                self.assertTrue(below, f"{name} ({path.relative_to(ROOT)}) imports {dependency}, which is not below it")

    def test_the_front_doors_reach_the_engine_through_the_turn_for_turns(self):
        # Requests of a chat turn are made by the turn layer; a front door adds only its own
        # extras (speculative decoding, canvases) to what `ChatTurn::request` returns.
        self.assertEqual(places("switches.insert(\"enable_thinking\""), [])
        self.assertEqual(places("reply_markup ="), ["crates/turn/src/turn.rs"])


    def test_the_front_doors_use_the_engines_root_api(self):
        # The engine's lib.rs lists what the front doors use; a module's path from a door is a
        # door reaching past that list. `defaults` (constants) and `media` (the media crate
        # under the engine's name) are modules of their own; the CLI's doctor looks deeper.
        allowed = {"defaults", "media"}
        deep = []
        for file, number, line in code_lines(ABOVE_THE_ENGINE):
            if file == "crates/cli/src/commands/doctor.rs":
                continue
            for module in re.findall(r"confab_engine::([a-z_]+)::", line):
                if module not in allowed:
                    deep.append(f"{file}:{number}: confab_engine::{module}::")
        self.assertEqual(deep, [], "import these from the engine's root (crates/engine/src/lib.rs lists them)")


class Rules(unittest.TestCase):
    """Each row of docs/architecture.md's table whose rule a text search can see."""

    def test_the_table_names_files_that_exist(self):
        table = (ROOT / "docs/architecture.md").read_text().split("## Where each rule lives", 1)[1]
        rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| rule") and "---" not in line]
        self.assertGreaterEqual(len(rows), 10)
        for row in rows:
            cell = row.split("|")[2]
            files = re.findall(r"`([\w./-]+\.(?:rs|py|md|ts))`", cell)
            self.assertTrue(files, f"no file in {row}")
            for file in files:
                self.assertTrue((ROOT / file).is_file(), f"{file} (in docs/architecture.md) does not exist")

    def test_thinking_and_effort(self):
        self.assertEqual(places('"enable_thinking"'), ["crates/turn/src/thinking.rs"])
        self.assertEqual(places('"reasoning_effort"'), ["crates/turn/src/thinking.rs"])

    def test_the_tool_choice_grammar(self):
        self.assertEqual(places("call_grammar("), ["crates/turn/src/tools.rs"])
        self.assertEqual(places("MAX_TOOLS: usize"), ["crates/turn/src/tools.rs"])

    def test_the_reply_read_back(self):
        self.assertEqual(places("ReplyParser::new("), ["crates/turn/src/reader.rs"])
        self.assertEqual(places("fn call_id("), ["crates/turn/src/reader.rs"])

    def test_the_prompt_budget(self):
        everywhere = ["crates", "src-tauri/src"]
        self.assertEqual(places("room_for_reply(", everywhere), ["crates/engine/src/runtime/context.rs"])

    def test_the_request_checks(self):
        self.assertEqual(places(".validate(usize::MAX)"), ["crates/turn/src/sampling.rs"])
        self.assertEqual(places("must be 1 or more"), ["crates/turn/src/error.rs"])

    def test_does_it_fit(self):
        everywhere = ["crates", "src-tauri/src"]
        self.assertEqual(places("fn fits_in_memory(", everywhere), ["crates/engine/src/model/memory.rs"])
        self.assertEqual(places('"bfloat16" | "float16"', everywhere), ["crates/engine/src/model/memory.rs"])
        self.assertEqual(places("<< 30) <=", everywhere), [], "a second fit verdict")
        ui = (ROOT / "ui/src/components/ModelPicker.tsx").read_text()
        self.assertNotIn("memory_needed_bytes <=", ui, "the picker's own verdict")

    def test_media_badges_follow_what_loads(self):
        # Discovery and the app ask `family::media_reads`; families read their own towers' configs.
        readers = ["crates/engine/src/model/discover.rs", "crates/engine/src/model/family.rs", "crates/hub/src", "src-tauri/src"]
        self.assertEqual(places('get("vision_config")', readers), ["crates/engine/src/model/family.rs"])


if __name__ == "__main__":
    unittest.main()
