"""The README stays a newcomer's page (issue 55): under 250 lines, the two commands first, and every
link in it and in docs/ reaching a file that exists, at a heading that exists."""

import pathlib
import re
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MAX_README_LINES = 250

LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path):
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, re.M)}


def broken_links(path):
    broken = []
    text = path.read_text()
    for number, line in enumerate(text.split("\n"), 1):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            linked = (path.parent / file).resolve() if file else path
            if not linked.exists():
                broken.append(f"{path.relative_to(ROOT)}:{number}: {target}: no such file")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                broken.append(f"{path.relative_to(ROOT)}:{number}: {target}: no such heading")
    return broken


class Readme(unittest.TestCase):
    def test_the_readme_is_short_and_starts_with_the_two_commands(self):
        lines = README.read_text().split("\n")
        self.assertLess(len(lines) - 1, MAX_README_LINES, "move detail into docs/")
        first_section = next(i for i, line in enumerate(lines) if line.startswith("## "))
        self.assertEqual(lines[first_section], "## The two commands")

    def test_links_in_the_readme_and_docs_reach_files_and_headings(self):
        broken = [b for path in [README, *sorted((ROOT / "docs").glob("*.md"))] for b in broken_links(path)]
        self.assertEqual(broken, [], "\n".join(broken))


if __name__ == "__main__":
    unittest.main()
