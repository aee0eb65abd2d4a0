#!/usr/bin/env python3
"""PDFs from producers too big to install in CI, made once and committed to tests/documents/committed/
(a few KB each), scored by tests/documents/score.py beside the corpus make_corpus.py makes at test time.

    python3 tests/documents/make_committed.py [OUT_DIR]   (default tests/documents/committed)

Needs Chromium (Debian `chromium`), LibreOffice (Debian `libreoffice-writer-nogui`), rsvg-convert
(Debian `librsvg2-bin`) and DejaVu Sans (`fonts-dejavu-core`); none of them is needed to score.
As make_corpus.py does, it writes NAME.pdf and NAME.txt, the text the producer was given, pages
separated by form feeds, in reading order (a footer at the end of its page). Run it again only to
change the files; the PDFs differ from run to run (creation dates, font subset names), the text
does not.

  chromium_columns    headless Chromium (Skia) printing a page with a title over two CSS columns
                      (column-count), justified, every long word given soft hyphens (&shy;): Chromium
                      splits the runs it draws at them, and a hyphen is drawn where a line breaks at
                      one.
  chromium_shy        Chromium, one narrow justified column of soft-hyphenated text over two
                      pages (a page break in the CSS).
  libreoffice_report  LibreOffice Writer (a flat ODT converted with --convert-to pdf): a heading,
                      paragraphs and a table on each of two pages, a footer with the page number
                      on both.
  rsvg_chart          rsvg-convert (librsvg, cairo) from SVG: a centred title, text lines placed by
                      <text> and <tspan>, a row of labels.
"""

import html
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from make_corpus import PARAGRAPHS, say, write_text  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
os.environ.setdefault("SOURCE_DATE_EPOCH", "1764806400")


def soft_hyphens(text):
    """Every word of eight letters or more given a soft hyphen every three letters (not in its last
    three): hyphenation points a browser may break a line at."""

    def split(match):
        word = match.group(0)
        if len(word) < 8:
            return word
        cuts = range(3, len(word) - 3, 3)
        parts, at = [], 0
        for cut in cuts:
            parts.append(word[at:cut])
            at = cut
        parts.append(word[at:])
        return "&shy;".join(parts)

    return re.sub(r"[A-Za-z]+", split, html.escape(text))


def chromium(out, name, page_css, body):
    binary = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not binary:
        raise RuntimeError("Chromium is not installed")
    with tempfile.TemporaryDirectory() as scratch:
        source = pathlib.Path(scratch) / f"{name}.html"
        source.write_text(
            '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><style>'
            + page_css
            + "</style></head><body>"
            + body
            + "</body></html>",
            encoding="utf-8",
        )
        subprocess.run(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer", f"--user-data-dir={scratch}/profile", f"--print-to-pdf={out / name}.pdf", source.as_uri()],
            check=True,
            capture_output=True,
            timeout=120,
        )


def chromium_columns(out):
    css = (
        "@page { size: A4; margin: 20mm } body { font-family: 'DejaVu Sans'; font-size: 9pt; margin: 0 }"
        " h1 { font-size: 15pt } .columns { column-count: 2; column-gap: 9mm; text-align: justify; hyphens: manual }"
        " p { margin: 0 0 6pt 0 }"
    )
    title = "Soil laboratory: the season ahead"
    paragraphs = PARAGRAPHS[:6]
    body = f"<h1>{html.escape(title)}</h1><div class='columns'>" + "".join(f"<p>{soft_hyphens(p)}</p>" for p in paragraphs) + "</div>"
    chromium(out, "chromium_columns", css, body)
    write_text(out, "chromium_columns", [title + "\n" + "\n".join(paragraphs)])


def chromium_shy(out):
    css = (
        "@page { size: A5; margin: 15mm } body { font-family: 'DejaVu Sans'; font-size: 10pt; margin: 0 }"
        " .narrow { width: 52mm; text-align: justify; hyphens: manual } .next { break-before: page }"
    )
    pages = [PARAGRAPHS[5:7], PARAGRAPHS[7:8]]
    body = "".join(
        f"<div class='narrow{' next' if i else ''}'>" + "".join(f"<p>{soft_hyphens(p)}</p>" for p in paragraphs) + "</div>" for i, paragraphs in enumerate(pages)
    )
    chromium(out, "chromium_shy", css, body)
    write_text(out, "chromium_shy", ["\n".join(p) for p in pages])


FODT = """<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"
 xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"
 office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.text">
<office:font-face-decls><style:font-face style:name="DejaVu Sans" svg:font-family="'DejaVu Sans'"/></office:font-face-decls>
<office:styles>
<style:style style:name="Standard" style:family="paragraph"><style:paragraph-properties fo:margin-bottom="0.2cm" fo:text-align="justify"/><style:text-properties style:font-name="DejaVu Sans" fo:font-size="10pt"/></style:style>
<style:style style:name="Heading" style:family="paragraph" style:parent-style-name="Standard"><style:paragraph-properties fo:margin-top="0.3cm" fo:text-align="start"/><style:text-properties fo:font-size="14pt" fo:font-weight="bold"/></style:style>
<style:style style:name="Footer" style:family="paragraph"><style:text-properties style:font-name="DejaVu Sans" fo:font-size="8pt"/></style:style>
</office:styles>
<office:automatic-styles>
<style:page-layout style:name="pm1"><style:page-layout-properties fo:page-width="14.8cm" fo:page-height="21cm" fo:margin-top="1.5cm" fo:margin-bottom="1cm" fo:margin-left="1.5cm" fo:margin-right="1.5cm"/>
<style:footer-style><style:header-footer-properties fo:min-height="0.6cm" fo:margin-top="0.5cm"/></style:footer-style></style:page-layout>
<style:style style:name="NextPage" style:family="paragraph" style:parent-style-name="Heading"><style:paragraph-properties fo:break-before="page"/></style:style>
</office:automatic-styles>
<office:master-styles><style:master-page style:name="Standard" style:page-layout-name="pm1"><style:footer>
<text:p text:style-name="Footer">FOOTER <text:page-number text:select-page="current">1</text:page-number></text:p>
</style:footer></style:master-page></office:master-styles>
<office:body><office:text>
BODY
</office:text></office:body></office:document>
"""


def libreoffice_report(out):
    binary = shutil.which("soffice") or shutil.which("libreoffice")
    if not binary:
        raise RuntimeError("LibreOffice is not installed")
    footer = "Soil laboratory annual report, page"
    pages = [
        ("Cold store inventory", PARAGRAPHS[0:2], [("Shelf", "Cores", "Field kits"), ("A1", "42", "3"), ("B2", "17", "5"), ("C3", "8", "0")]),
        ("Backups and outreach", PARAGRAPHS[3:5], [("Drive", "Written", "Checked"), ("North", "Monday", "Friday"), ("South", "Tuesday", "Sunday")]),
    ]
    esc = html.escape
    body = []
    texts = []
    for n, (heading, paragraphs, rows) in enumerate(pages, 1):
        body.append(f'<text:p text:style-name="{"NextPage" if n > 1 else "Heading"}">{esc(heading)}</text:p>')
        body.extend(f'<text:p text:style-name="Standard">{esc(p)}</text:p>' for p in paragraphs)
        body.append(f'<table:table table:name="Table{n}"><table:table-column table:number-columns-repeated="3"/>')
        for row in rows:
            cells = "".join(f'<table:table-cell><text:p text:style-name="Standard">{esc(c)}</text:p></table:table-cell>' for c in row)
            body.append(f"<table:table-row>{cells}</table:table-row>")
        body.append("</table:table>")
        texts.append("\n".join([heading, *paragraphs, *(" ".join(r) for r in rows), f"{footer} {n}"]))
    with tempfile.TemporaryDirectory() as scratch:
        source = pathlib.Path(scratch) / "libreoffice_report.fodt"
        source.write_text(FODT.replace("FOOTER", esc(footer)).replace("BODY", "\n".join(body)), encoding="utf-8")
        subprocess.run(
            [binary, f"-env:UserInstallation=file://{scratch}/profile", "--headless", "--convert-to", "pdf", "--outdir", str(out), str(source)],
            check=True,
            capture_output=True,
            timeout=180,
        )
    write_text(out, "libreoffice_report", texts)


def rsvg_chart(out):
    binary = shutil.which("rsvg-convert")
    if not binary:
        raise RuntimeError("rsvg-convert (librsvg2-bin) is not installed")
    import textwrap

    title = "Cores logged per shelf"
    lines = textwrap.wrap(PARAGRAPHS[1], 62)
    labels = ["Shelf A1: 42", "Shelf B2: 17", "Shelf C3: 8"]
    esc = html.escape
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="420" height="300" font-family="DejaVu Sans" font-size="10">']
    svg.append(f'<text x="210" y="30" font-size="15" text-anchor="middle" font-weight="bold">{esc(title)}</text>')
    for i, line in enumerate(lines):
        first, _, rest = line.partition(" ")
        # A line in two pieces, the first word in a tspan of its own weight.
        svg.append(f'<text x="20" y="{60 + i * 14}"><tspan font-style="italic">{esc(first)}</tspan> {esc(rest)}</text>')
    for i, label in enumerate(labels):
        svg.append(f'<text x="{20 + i * 135}" y="{90 + len(lines) * 14}">{esc(label)}</text>')
    svg.append("</svg>")
    with tempfile.TemporaryDirectory() as scratch:
        source = pathlib.Path(scratch) / "rsvg_chart.svg"
        source.write_text("\n".join(svg), encoding="utf-8")
        subprocess.run([binary, "-f", "pdf", "-o", str(out / "rsvg_chart.pdf"), str(source)], check=True)
    write_text(out, "rsvg_chart", ["\n".join([title, *lines, " ".join(labels)])])


PRODUCERS = [
    ("chromium_columns", chromium_columns),
    ("chromium_shy", chromium_shy),
    ("libreoffice_report", libreoffice_report),
    ("rsvg_chart", rsvg_chart),
]


def main():
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests" / "documents" / "committed"
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name, make in PRODUCERS:
        try:
            make(out)
        except Exception as error:  # noqa: BLE001  one producer missing leaves the others' files
            say(f"{name} failed: {type(error).__name__}: {error}")
            failed += 1
    say(f"{len(PRODUCERS) - failed}/{len(PRODUCERS)} producers wrote into {out}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
