#!/usr/bin/env python3
"""PDFs larger than the default model's context, for the app's document search (tests/e2e/test_document_search.py).

    /opt/confab-ref/bin/python tests/reference/make_long_documents.py

Needs reportlab (the reference venv of docs/tests.md has it). Works offline. CI never runs this; the outputs are committed. It
rewrites only tests/reference/fixtures/documents/, and writes `expected.json` beside the files: the page
each planted fact is on, so the tests compare with what the producer was given.

What it makes (reportlab canvas, Helvetica, page compression on; the filler is seeded, so a rerun makes the
same text):

  long_report.pdf  40 pages of filler prose from a small vocabulary (about 330 words a page: about 17,000
                   SmolLM2 tokens, twice its 8,192-token context), each page titled "Chapter N"; page 27
                   alone also says who the lighthouse keeper's cat is (words the filler never uses), so a
                   search for the question must find page 27.
  many_pages.pdf   300 pages of the same filler, about 120 words a page: an index of some hundreds of
                   passages, made while the window shows its progress.
"""
import json
import os
import random

from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures", "documents")

FILLER = (
    "river stone bread window garden market morning letter silver orange table winter "
    "paper village mountain summer copper basket lantern meadow harbour pepper violet "
    "carpet pocket ribbon saddle thunder willow candle marble orchard pebble quarry "
    "shadow timber valley walnut yellow anchor bottle button cellar cotton ladder"
).split()
FACT = "The lighthouse keeper's cat is named Marmalade, and she sleeps on the foghorn."
FACT_PAGE = 27


def filler(rng: random.Random, words: int) -> list[str]:
    """Sentences of five to twelve filler words each."""
    sentences, left = [], words
    while left > 0:
        n = min(left, rng.randint(5, 12))
        sentence = " ".join(rng.choice(FILLER) for _ in range(n))
        sentences.append(sentence[0].upper() + sentence[1:] + ".")
        left -= n
    return sentences


def lines_of(sentences: list[str], width: int = 92) -> list[str]:
    lines, line = [], ""
    for word in " ".join(sentences).split():
        if len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    if line:
        lines.append(line)
    return lines


def write(name: str, pages: int, words: int, fact_page: int | None, seed: int) -> None:
    rng = random.Random(seed)
    path = os.path.join(OUT, name)
    pdf = canvas.Canvas(path, pagesize=A4, pageCompression=1, invariant=1)
    pdf.setTitle(name)
    _, height = A4
    for page in range(1, pages + 1):
        pdf.setFont("Helvetica-Bold", 14)
        pdf.drawString(56, height - 64, f"Chapter {page}")
        sentences = filler(rng, words)
        if page == fact_page:
            sentences.insert(len(sentences) // 2, FACT)
        pdf.setFont("Helvetica", 9)
        y = height - 92
        for line in lines_of(sentences):
            pdf.drawString(56, y, line)
            y -= 12
        if y < 40:
            raise SystemExit(f"{name}: page {page} overflows; use fewer words")
        pdf.showPage()
    pdf.save()
    print(f"{path}: {pages} pages, {os.path.getsize(path)} bytes")


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    write("long_report.pdf", 40, 330, FACT_PAGE, seed=42)
    write("many_pages.pdf", 300, 120, None, seed=7)
    expected = {"long_report.pdf": {"pages": 40, "fact": FACT, "fact_page": FACT_PAGE}, "many_pages.pdf": {"pages": 300}}
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
