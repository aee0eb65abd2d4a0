"""The engine's shape (issue 40), checked on its source:

- It never waits for a client, the window included, since a wait on the one engine thread stalls
  every other row of the batch, the local server's requests among them. The engine's runtime
  holds no primitive a client could hold it with (a condition variable, a timed wait on something
  a caller sets, a sleep); its only blocking call is the engine thread's own wait for the next
  command, when it has nothing to do.
- A model family is its folder and its registry line: no other engine module reaches into a
  family's folder (`families::<name>`) or names one of its model types, except the places whose
  job is to name formats (`model/format/`, the GGUF architectures; `text/`, the markup a model
  family writes) and tests.
- It infers and nothing else of the app's: no dependency on the app's environment (where Confab
  and other apps keep files: `confab-paths`), on ts-rs but behind its `ts` feature, or on the
  window; no other app's folders or the window's handshake in its code."""

import pathlib
import re
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
ENGINE = ROOT / "crates" / "engine" / "src"
RUNTIME = ENGINE / "runtime"
FAMILIES = ENGINE / "model" / "families"
# Where naming a family is the job: the registry, the file formats' architecture names, the
# markup each family writes.
NAMING_ALLOWED = [ENGINE / "model" / "registry.rs", ENGINE / "model" / "format", ENGINE / "text"]

# What a wait on a client looks like in Rust's standard library.
WAITS = re.compile(r"\bCondvar\b|\bwait_timeout\w*\b|\.wait\(|thread::sleep|\bpark(_timeout)?\(|\bBarrier\b")
# The engine thread waiting for its next command while idle (engine.rs) is not a wait on a client.
ALLOWED = re.compile(r"commands\.recv(_timeout)?\(")


def waits_in(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if WAITS.search(line) and not ALLOWED.search(line)
            and not line.lstrip().startswith("//")]


class EngineWaitsForNoClient(unittest.TestCase):
    def test_the_runtime_has_no_wait_a_client_could_hold(self):
        found = {str(path.relative_to(ROOT)): waits_in(path.read_text()) for path in sorted(RUNTIME.rglob("*.rs"))}
        found = {path: lines for path, lines in found.items() if lines}
        self.assertEqual(found, {}, "the engine thread must never wait for a client (README, the window and the engine)")

    def test_finds_a_wait(self):
        self.assertEqual(waits_in("let (shown, _) = changed.wait_timeout_while(guard, at_most, |s| !*s);"),
                         ["let (shown, _) = changed.wait_timeout_while(guard, at_most, |s| !*s);"])
        self.assertEqual(len(waits_in("pub struct Shown(Arc<(Mutex<bool>, Condvar)>);")), 1)
        self.assertEqual(waits_in("match commands.recv_timeout(IDLE_PERSIST / 2) {"), [])
        self.assertEqual(waits_in("// a Condvar here would be wrong"), [])


def model_types(family: pathlib.Path) -> list[str]:
    """The `model_types` a family declares in its folder."""
    found = []
    for path in family.rglob("*.rs"):
        for listed in re.findall(r"model_types:\s*&\[([^\]]*)\]", path.read_text()):
            found += re.findall(r'"([^"]+)"', listed)
    return found


def without_tests_and_comments(text: str) -> str:
    """The code of a Rust file: up to its test module (kept last by convention), comments dropped
    (a line's end after `//` too, which may cut a string: this only finds less)."""
    code = text.split("#[cfg(test)]")[0]
    return "\n".join(line.split("//")[0] for line in code.splitlines())


def family_names_outside(engine: pathlib.Path, families: dict[str, list[str]], allowed: list[pathlib.Path]) -> dict:
    """Per engine file outside the families' folders and `allowed`, the families it names."""
    found = {}
    for path in sorted(engine.rglob("*.rs")):
        if path.is_relative_to(engine / "model" / "families") or any(path == a or path.is_relative_to(a) for a in allowed):
            continue
        code = without_tests_and_comments(path.read_text())
        named = sorted(name for name, types in families.items()
                       if re.search(rf"\bfamilies::{name}\b", code) or any(f'"{t}"' in code for t in types))
        if named:
            found[str(path.relative_to(engine))] = named
    return found


class FamiliesStayInTheirFolders(unittest.TestCase):
    def test_no_engine_module_names_a_family(self):
        families = {d.name: model_types(d) for d in sorted(FAMILIES.iterdir()) if d.is_dir()}
        self.assertIn("llama", families["llama"])
        self.assertEqual(family_names_outside(ENGINE, families, NAMING_ALLOWED), {},
                         "a family is one folder and one registry line (README, Adding a model family)")

    def test_finds_a_family_named_outside_its_folder(self):
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            engine = pathlib.Path(tmp)
            (engine / "model" / "families" / "gemma4").mkdir(parents=True)
            (engine / "model" / "families" / "gemma4" / "mod.rs").write_text('model_types: &["gemma4_text"],')
            (engine / "runtime").mkdir()
            (engine / "runtime" / "plan.rs").write_text(
                'use crate::model::families::gemma4::Gemma4Towers;\n// "gemma4_text" in a comment is fine\n')
            (engine / "runtime" / "ok.rs").write_text('fn f() {}\n#[cfg(test)]\nmod tests { const T: &str = "gemma4_text"; }\n')
            (engine / "cache.rs").write_text('if config.model_type == "gemma4_text" { }')
            families = {"gemma4": model_types(engine / "model" / "families" / "gemma4")}
            self.assertEqual(family_names_outside(engine, families, []), {"cache.rs": ["gemma4"], "runtime/plan.rs": ["gemma4"]})


# The app's concerns, as they would show in the engine's code.
APP_CONCERNS = re.compile(r"lmstudio|lm-studio|\.ollama/models|huggingface/hub|HF_HUB_CACHE|HF_HOME|XDG_DATA_HOME|XDG_CACHE_HOME"
                          r"|Application Support|prompt_shown|first_token_shown|\btauri\b")


def dependencies(cargo_toml: str) -> dict[str, str]:
    """The `[dependencies]` of a Cargo.toml: name -> its specification."""
    section = re.search(r"^\[dependencies\]\n(.*?)(?=^\[|\Z)", cargo_toml, re.M | re.S)
    found = {}
    for line in (section.group(1) if section else "").splitlines():
        m = re.match(r"([A-Za-z0-9_-]+)(?:\.workspace)?\s*=\s*(.*)", line)
        if m:
            found[m.group(1)] = m.group(2)
    return found


def app_concerns(cargo_toml: str, sources: dict[str, str]) -> list[str]:
    deps = dependencies(cargo_toml)
    found = [f"depends on {name}" for name in ("confab-paths", "tauri", "confab-store") if name in deps]
    if "ts-rs" in deps and "optional = true" not in deps["ts-rs"]:
        found.append("depends on ts-rs outside its `ts` feature")
    for name, text in sources.items():
        code = without_tests_and_comments(text)
        found += [f"{name}: {m.group(0)}" for m in APP_CONCERNS.finditer(code)]
    return found


class EngineOnlyInfers(unittest.TestCase):
    def test_the_engine_has_none_of_the_apps_concerns(self):
        sources = {str(p.relative_to(ENGINE)): p.read_text() for p in sorted(ENGINE.rglob("*.rs"))}
        self.assertEqual(app_concerns((ENGINE.parent / "Cargo.toml").read_text(), sources), [],
                         "the app's environment lives in crates/paths, its IPC types behind the `ts` feature")

    def test_finds_the_apps_concerns(self):
        toml = '[dependencies]\nts-rs.workspace = true\nconfab-paths = { path = "../paths" }\n\n[dev-dependencies]\ntauri = "2"\n'
        sources = {"paths.rs": 'let lm = home.join(".lmstudio/models"); // HF_HOME in a comment is fine\n'}
        self.assertEqual(app_concerns(toml, sources),
                         ["depends on confab-paths", "depends on ts-rs outside its `ts` feature", "paths.rs: lmstudio"])
        self.assertEqual(app_concerns('[dependencies]\nts-rs = { workspace = true, optional = true }\n', {}), [])


if __name__ == "__main__":
    unittest.main()
