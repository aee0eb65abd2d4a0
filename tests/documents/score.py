#!/usr/bin/env python3
"""How well Confab reads PDFs, beside pdftotext (poppler), PyMuPDF, pypdf and pdfminer.six, on a
corpus made by tests/documents/make_corpus.py from known text.

    .deps/docs/venv/bin/python tests/documents/score.py [--corpus DIR] [--binary PATH] [--files] [--json]

Without --corpus it makes one in a temporary folder. The PDFs in tests/documents/committed/ (made
once by make_committed.py, from producers too big to install in CI: Chromium, LibreOffice, rsvg)
are scored with it (--committed '' leaves them out). Damaged DOCX and HTML files in the corpus
(NAME.docx or NAME.html with NAME.bad) must be refused by Confab too; the PDF readers are not run
on them. Confab is the `extract` example of
crates/documents (`cargo build -p confab-documents --example extract`; default
$CARGO_TARGET_DIR/debug/examples/extract).

For each file with its source text (NAME.txt), over word tokens (Unicode \\w+ runs, lowercased (not
case-folded, which writes ligatures out), no other normalisation: a ligature character or a word split by a hyphen counts as a miss):
  recall  the fraction of the source's tokens found in the output, as multisets
          (sum over words of min(count in source, count in output) / tokens in source);
  order   the longest common subsequence of the two token sequences over the tokens found
          (LCS / that multiset intersection): 1.0 when everything found is in the source's order.
Both are averaged over files. A file that must be refused (NAME.bad) counts as refused when the
reader raises an error, exits non-zero or gives no word at all; anything else is garbage passed on.
ms/page: reading time over the readable files' pages; Confab's and the Python readers' in process,
pdftotext's a process each (its start included).
"""

import argparse
import collections
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
WORD = re.compile(r"\w+")


def tokens(text):
    return [w.lower() for w in WORD.findall(text)]


def recall_and_order(source, output):
    src, out = tokens(source), tokens(output)
    if not src:
        return None
    found = sum((collections.Counter(src) & collections.Counter(out)).values())
    if not found:
        return 0.0, 0.0
    return found / len(src), lcs(src, out) / found


def lcs(a, b):
    """Length of the longest common subsequence, one row at a time."""
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b, 1):
            keep = row[j]
            row[j] = prev + 1 if x == y else max(row[j], row[j - 1])
            prev = keep
    return row[-1]


# --- readers: each returns (text or None when it refused, pages, ms) ------------------------------


def confab(binary):
    def read_all(paths):
        done = subprocess.run([str(binary), *map(str, paths)], capture_output=True, text=True, check=True)
        results = {}
        for line in done.stdout.splitlines():
            item = json.loads(line)
            text = item.get("text") if "error" not in item else None
            results[item["file"]] = (text, item.get("pages") or 1, item["ms"], item.get("error"))
        return results

    return read_all


def pdftotext(path):
    start = time.perf_counter()
    done = subprocess.run(["pdftotext", "-enc", "UTF-8", str(path), "-"], capture_output=True)
    ms = (time.perf_counter() - start) * 1e3
    if done.returncode:
        return None, 1, ms, done.stderr.decode(errors="replace").strip()[:120]
    return done.stdout.decode("utf-8", "replace"), done.stdout.count(b"\f") or 1, ms, None


def pymupdf(path):
    import pymupdf as fitz

    start = time.perf_counter()
    with fitz.open(str(path)) as doc:
        if doc.needs_pass and not doc.authenticate(""):
            raise RuntimeError("encrypted")
        text = "\f".join(page.get_text() for page in doc)
        pages = doc.page_count
    return text, pages, (time.perf_counter() - start) * 1e3, None


def pypdf(path):
    from pypdf import PdfReader

    start = time.perf_counter()
    reader = PdfReader(str(path))
    if reader.is_encrypted:
        reader.decrypt("")
    text = "\f".join(page.extract_text() or "" for page in reader.pages)
    return text, len(reader.pages), (time.perf_counter() - start) * 1e3, None


def pdfminer(path):
    from pdfminer.high_level import extract_text
    from pdfminer.pdfpage import PDFPage

    start = time.perf_counter()
    text = extract_text(str(path))
    ms = (time.perf_counter() - start) * 1e3
    with open(path, "rb") as f:
        pages = sum(1 for _ in PDFPage.get_pages(f))
    return text, pages, ms, None


def guarded(reader):
    def read(path):
        import logging
        import warnings

        logging.disable(logging.CRITICAL)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return reader(path)
            except Exception as error:  # noqa: BLE001  a reader's error is a refusal
                return None, 1, 0.0, f"{type(error).__name__}: {error}"[:120]

    return read


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", help="a folder make_corpus.py wrote (default: made now, in a temporary folder)")
    parser.add_argument("--binary", default=str(TARGET / "debug" / "examples" / "extract"))
    parser.add_argument("--committed", default=str(ROOT / "tests" / "documents" / "committed"), help="committed PDFs scored with the corpus ('' for none)")
    parser.add_argument("--readers", default="confab,pdftotext,pymupdf,pypdf,pdfminer")
    parser.add_argument("--files", action="store_true", help="a line per file and reader")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--check", action="store_true", help="exit 1 unless Confab's recall and order are at least the best other reader's and it refuses every bad file (make test)")
    args = parser.parse_args()

    temporary = None
    if args.corpus:
        corpus = pathlib.Path(args.corpus)
    else:
        temporary = tempfile.TemporaryDirectory()
        corpus = pathlib.Path(temporary.name)
        subprocess.run([sys.executable, str(ROOT / "tests" / "documents" / "make_corpus.py"), str(corpus)], check=True)
    folders = [corpus] + ([pathlib.Path(args.committed)] if args.committed else [])
    pdfs = sorted((p for folder in folders for p in folder.glob("*.pdf")), key=lambda p: p.name)
    good = [p for p in pdfs if p.with_suffix(".txt").exists()]
    bad = [p for p in pdfs if p.with_suffix(".bad").exists()]
    # Damaged documents of the other formats Confab reads: Confab's alone.
    bad_other = sorted(p for ext in ("docx", "html") for p in corpus.glob(f"*.{ext}") if p.with_suffix(".bad").exists())

    readers = {"pdftotext": pdftotext, "pymupdf": guarded(pymupdf), "pypdf": guarded(pypdf), "pdfminer": guarded(pdfminer)}
    names = args.readers.split(",")
    results = {}
    for name in names:
        if name == "confab":
            batch = confab(args.binary)(good + bad + bad_other)
            results[name] = {p: batch[str(p)] for p in good + bad + bad_other}
        else:
            results[name] = {p: readers[name](p) for p in good + bad}

    labels = {"confab": "Confab", "pdftotext": "pdftotext (poppler)", "pymupdf": "PyMuPDF", "pypdf": "pypdf", "pdfminer": "pdfminer.six"}
    summary = {}
    rows = []
    for name in names:
        scores = []
        pages = ms = 0.0
        for path in good:
            text, n, t, error = results[name][path]
            score = recall_and_order(path.with_suffix(".txt").read_text(encoding="utf-8"), text or "")
            scores.append(score)
            pages += n
            ms += t
            if args.files:
                rows.append(f"  {name:10} {path.stem:22} recall {score[0]:.3f} order {score[1]:.3f}" + (f"  error: {error}" if error else ""))
        refused = 0
        for path in bad:
            text, _, _, error = results[name][path]
            refused += text is None or not tokens(text)
            if args.files:
                rows.append(f"  {name:10} {path.stem:22} " + (f"refused: {error}" if text is None else f"gave {len(tokens(text))} words: {text[:60]!r}"))
        refused_other = 0
        for path in bad_other if name == "confab" else []:
            text, _, _, error = results[name][path]
            refused_other += text is None or not tokens(text)
            if args.files:
                rows.append(f"  {name:10} {path.name:22} " + (f"refused: {error}" if text is None else f"gave {len(tokens(text))} words: {text[:60]!r}"))
        summary[name] = {
            "recall": sum(s[0] for s in scores) / len(scores),
            "order": sum(s[1] for s in scores) / len(scores),
            "refused": refused,
            "bad": len(bad),
            **({"refused_other": refused_other, "bad_other": len(bad_other)} if name == "confab" else {}),
            "ms_per_page": ms / pages if pages else 0.0,
            "files": {p.stem: s for p, s in zip(good, scores)},
        }

    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        print_table(summary, names, labels, good, bad, corpus, rows)
    if args.check:
        sys.exit(check(summary))


def check(summary):
    """The issue's bar: Confab at least the best of the others in recall and order, every bad file refused."""
    ours = summary["confab"]
    failures = []
    for metric in ("recall", "order"):
        best = max((s[metric], name) for name, s in summary.items() if name != "confab")
        if ours[metric] < best[0] - 1e-9:
            failures.append(f"Confab's {metric} {ours[metric]:.3f} is under {best[1]}'s {best[0]:.3f}")
    if ours["refused"] < ours["bad"]:
        failures.append(f"Confab refused {ours['refused']} of {ours['bad']} damaged or encrypted files")
    if ours["refused_other"] < ours["bad_other"]:
        failures.append(f"Confab refused {ours['refused_other']} of {ours['bad_other']} damaged DOCX and HTML files")
    for failure in failures:
        print(f"score.py: {failure}", file=sys.stderr)
    return 1 if failures else 0


def print_table(summary, names, labels, good, bad, corpus, rows):
    print(f"{len(good)} PDFs with their source text, {len(bad)} that must be refused ({corpus} and the committed files)\n")
    print("| reader | word recall | order | bad files refused | ms/page |")
    print("|---|---|---|---|---|")
    for name in names:
        s = summary[name]
        print(f"| {labels[name]} | {s['recall']:.3f} | {s['order']:.3f} | {s['refused']}/{s['bad']} | {s['ms_per_page']:.2f} |")
    ours = summary.get("confab", {})
    if ours.get("bad_other"):
        print(f"\nConfab refused {ours['refused_other']}/{ours['bad_other']} damaged DOCX and HTML files (the PDF readers are not run on them).")
    if rows:
        print("\n" + "\n".join(rows))


if __name__ == "__main__":
    main()
