#!/usr/bin/env python3
"""Finds import cycles between a crate's modules: two sibling modules (files or folders under the
same parent) that each use something of the other, directly or around a loop. A module may use
its ancestors and its descendants freely; `pub use` re-exports are followed to the module that
defines the item, so a cycle hidden behind a parent's re-export is still found.

    python3 scripts/module_cycles.py [CRATE_SRC_DIR ...]   # default: every crate in the workspace

Prints each cycle with one `use` that makes each of its edges, and exits 1 when there is one.
Only `crate::`, `self::` and `super::` paths count (crates cannot depend on each other in a
loop: Cargo refuses). Test modules (`#[cfg(test)] mod tests { ... }` at a file's end) are left out.
"""
from __future__ import annotations

import pathlib
import re
import sys
from collections import defaultdict

ROOT = pathlib.Path(__file__).resolve().parent.parent
Module = tuple[str, ...]

USE = re.compile(r"^\s*(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", re.M)
INLINE = re.compile(r"\b(crate|super|self)((?:::\w+)+)")
TESTS = re.compile(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*mod\s+\w+\s*\{", re.M)
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\])*"')


def crate_dirs() -> list[pathlib.Path]:
    dirs = [p.parent for p in ROOT.glob("crates/*/src/lib.rs")] + [p.parent for p in ROOT.glob("crates/*/src/main.rs")]
    dirs += [ROOT / "src-tauri" / "src"]
    return sorted({d for d in dirs if d.is_dir() and "upstream" not in d.parts})


def modules(src: pathlib.Path) -> dict[Module, pathlib.Path]:
    found: dict[Module, pathlib.Path] = {}
    for path in src.rglob("*.rs"):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts in (["lib"], ["main"]):
            parts = []
        elif parts[-1] == "mod":
            parts = parts[:-1]
        found[tuple(parts)] = path
    return found


def source(path: pathlib.Path) -> str:
    text = STRING.sub('""', COMMENT.sub("", path.read_text()))
    tests = TESTS.search(text)
    return text[: tests.start()] if tests else text


def expand(tree: str) -> list[tuple[list[str], str]]:
    """`a::{b, c::{d as e}}` → [(['a','b'], 'b'), (['a','c','d'], 'e')]: each path and its name."""
    tree = re.sub(r"\s+", "", tree)

    def walk(prefix: list[str], text: str) -> list[tuple[list[str], str]]:
        out = []
        for part in split_top(text):
            if "{" in part:
                head, body = part.split("{", 1)
                out += walk(prefix + [s for s in head.split("::") if s], body[:-1])
            else:
                path, _, alias = part.partition("as")
                segments = prefix + [s for s in path.split("::") if s]
                if segments:
                    out.append((segments, alias or segments[-1]))
        return out

    return walk([], tree)


def split_top(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        current += ch
    return [p for p in parts + [current] if p]


def absolute(here: Module, segments: list[str]) -> list[str] | None:
    """A crate-relative path, or None for another crate's."""
    if not segments:
        return None
    base = list(here)
    head, rest = segments[0], segments[1:]
    if head == "crate":
        base = []
    elif head == "self":
        pass
    elif head == "super":
        base = base[:-1]
        while rest and rest[0] == "super":
            base, rest = base[:-1], rest[1:]
    else:
        return None
    return base + rest


class Crate:
    def __init__(self, src: pathlib.Path):
        self.src = src
        self.files = modules(src)
        self.texts = {m: source(p) for m, p in self.files.items()}
        # Per module: name → the path it re-exports (`pub use`).
        self.reexports: dict[Module, dict[str, list[str]]] = defaultdict(dict)
        self.globs: dict[Module, list[list[str]]] = defaultdict(list)
        for module, text in self.texts.items():
            for match in USE.finditer(text):
                if not match.group(1):
                    continue
                for segments, name in expand(match.group(2)):
                    full = absolute(module, segments) if segments[0] in ("crate", "self", "super") else (
                        list(module) + segments if tuple(list(module) + segments[:1]) in self.files else None)
                    if full is None:
                        continue
                    if name == "*":
                        self.globs[module].append(full[:-1])
                    else:
                        self.reexports[module][name] = full

    def resolve(self, path: list[str], depth: int = 0) -> Module | None:
        """The module that defines what `path` names (following re-exports)."""
        longest = max((i for i in range(len(path) + 1) if tuple(path[:i]) in self.files), default=None)
        if longest is None:
            return None
        module = tuple(path[:longest])
        rest = path[longest:]
        if not rest or depth > 8:
            return module
        name = rest[0]
        if name in self.reexports[module]:
            target = self.resolve(self.reexports[module][name] + rest[1:], depth + 1)
            return target or module
        for glob in self.globs[module]:
            target = self.resolve(glob + rest, depth + 1)
            if target and target != tuple(glob):
                return target
        return module

    def edges(self) -> dict[tuple[Module, Module], str]:
        """(from, to) between modules, with one place that makes it."""
        found: dict[tuple[Module, Module], str] = {}
        for module, text in self.texts.items():
            uses = [(m.start(), segments) for m in USE.finditer(text) for segments, _ in expand(m.group(2))]
            inline = [(m.start(), [m.group(1)] + m.group(2).split("::")[1:]) for m in INLINE.finditer(USE.sub("", text))]
            for at, segments in uses + inline:
                if segments[0] not in ("crate", "self", "super"):
                    local = list(module) + segments
                    if tuple(local[: len(module) + 1]) not in self.files:
                        continue
                    full = local
                else:
                    full = absolute(module, segments)
                if full is None:
                    continue
                if full and full[-1] in ("*", "self"):
                    full = full[:-1]
                target = self.resolve(full)
                if target is None or target == module:
                    continue
                line = text.count("\n", 0, at) + 1
                path = self.files[module]
                found.setdefault((module, target), f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{line}")
        return found


def sibling_edges(edges: dict[tuple[Module, Module], str]) -> dict[Module, dict[tuple[str, str], str]]:
    """Each edge lifted to the two children of the modules' nearest common parent."""
    by_parent: dict[Module, dict[tuple[str, str], str]] = defaultdict(dict)
    for (a, b), where in edges.items():
        common = 0
        while common < min(len(a), len(b)) and a[common] == b[common]:
            common += 1
        if common == len(a) or common == len(b):
            continue  # an ancestor or a descendant
        by_parent[a[:common]].setdefault((a[common], b[common]), where)
    return by_parent


def cycles(graph: dict[tuple[str, str], str]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    nodes = sorted({n for edge in graph for n in edge})
    succ = defaultdict(list)
    for a, b in graph:
        succ[a].append(b)
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in nodes:
        if v not in index:
            visit(v)
    return out


def find(src: pathlib.Path) -> list[tuple[Module, list[str], list[str]]]:
    """Each cycle in a crate: the modules' common parent, the sibling modules, and one place
    per edge that makes it."""
    found = []
    for parent, graph in sorted(sibling_edges(Crate(src).edges()).items()):
        for component in cycles(graph):
            edges = [f"{a} -> {b}  ({at})" for (a, b), at in sorted(graph.items()) if a in component and b in component]
            found.append((parent, component, edges))
    return found


def report(src: pathlib.Path) -> list[str]:
    problems = []
    for parent, component, edges in find(src):
        where = "::".join(("crate",) + parent)
        name = src.relative_to(ROOT) if src.is_relative_to(ROOT) else src
        lines = [f"{name}: modules {', '.join(component)} under {where} import each other:"]
        problems.append("\n".join(lines + [f"    {e}" for e in edges]))
    return problems


def main(argv: list[str]) -> int:
    dirs = [pathlib.Path(a).resolve() for a in argv] or crate_dirs()
    problems = [p for d in dirs for p in report(d)]
    for p in problems:
        print(p)
    print(f"{len(problems)} import cycle(s) in {len(dirs)} crate(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
