"""No import cycles between modules (issue 16): `scripts/module_cycles.py` over every crate.
The cycles still to break are listed in KNOWN; a new one fails, and so does a listed one that
is gone (take it off the list, so that it cannot come back)."""

import importlib.util
import pathlib
import tempfile
import textwrap
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("module_cycles", ROOT / "scripts" / "module_cycles.py")
module_cycles = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module_cycles)

# (crate source folder, parent module, the sibling modules that import each other).
KNOWN: set[tuple[str, str, str]] = set()


def cycles_in(src: pathlib.Path) -> set[tuple[str, str]]:
    return {("::".join(("crate",) + parent), " ".join(component)) for parent, component, _ in module_cycles.find(src)}


def make_crate(files: dict[str, str]) -> pathlib.Path:
    src = pathlib.Path(tempfile.mkdtemp(prefix="cycles-")) / "src"
    for name, text in files.items():
        path = src / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return src


class ModuleCycles(unittest.TestCase):
    def test_the_workspace_has_only_the_known_cycles(self):
        found = set()
        for src in module_cycles.crate_dirs():
            rel = str(src.relative_to(ROOT))
            found |= {(rel, parent, members) for parent, members in cycles_in(src)}
        new = found - KNOWN
        gone = KNOWN - found
        details = "\n".join(p for src in module_cycles.crate_dirs() for p in module_cycles.report(src))
        self.assertFalse(new, f"new import cycles between modules:\n{details}")
        self.assertFalse(gone, f"these cycles are gone or changed: update KNOWN in {__file__}: {sorted(gone)}\n{details}")

    def test_finds_a_direct_cycle(self):
        src = make_crate({
            "lib.rs": "mod a;\nmod b;\n",
            "a.rs": "use crate::b::B;\npub struct A;\n",
            "b.rs": "pub struct B;\nfn f() -> crate::a::A { todo!() }\n",
        })
        self.assertEqual(cycles_in(src), {("crate", "a b")})

    def test_follows_a_parent_reexport_to_find_a_hidden_cycle(self):
        src = make_crate({
            "lib.rs": "mod p;\n",
            "p/mod.rs": "mod q;\nmod r;\npub use q::Q;\n",
            "p/q.rs": "use super::r::R;\npub struct Q;\n",
            "p/r.rs": "use super::Q;\npub struct R;\n",
        })
        self.assertEqual(cycles_in(src), {("crate::p", "q r")})

    def test_parents_children_and_tests_are_not_cycles(self):
        src = make_crate({
            "lib.rs": "mod p;\nmod leaf;\n",
            "p/mod.rs": "mod q;\npub use q::Q;\npub struct Shared;\n",
            "p/q.rs": "use super::Shared;\nuse crate::leaf::L;\npub struct Q;\n"
                      "#[cfg(test)]\nmod tests {\n    use crate::p::Q;\n}\n",
            "leaf.rs": "pub struct L;\n#[cfg(test)]\nmod tests {\n    use crate::p::Q;\n}\n",
        })
        self.assertEqual(cycles_in(src), set())


if __name__ == "__main__":
    unittest.main()
