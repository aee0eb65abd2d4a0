#!/usr/bin/env python3
"""Small documents made by real producers, for confab-documents' tests (crates/documents/tests).

    /opt/confab-ref/bin/python tests/reference/make_documents.py

Needs reportlab (PDFs), pypdf (encrypting one) and python-docx (DOCX); Pillow draws the scanned page;
DejaVu Sans (Debian's fonts-dejavu-core, /usr/share/fonts/truetype/dejavu) is the Unicode font.
The reference venv of docs/tests.md ('Reference fixtures') has them. Works offline. CI never runs this;
the outputs are committed (a few KB each). It rewrites only crates/documents/tests/fixtures/, and writes
`expected.json` beside the files: the text each one holds, in reading order, page by page, so the Rust
tests compare with what the producer was given rather than with strings copied by hand. The encrypted
PDFs (pypdf draws a random file ID) and the DOCX (ZIP entry times) differ byte for byte between runs;
their text does not, so a rerun need not replace the committed ones.

What it makes:

  two_pages.pdf   reportlab canvas, Helvetica: a heading and two lines on page 1, a heading and two lines
                  (one with Latin-1 accents) on page 2.
  report.pdf      reportlab platypus (the flowing layout most reports come from): a title, a heading, a
                  paragraph wrapped over several lines, over two pages (a page break).
  encrypted.pdf   two_pages.pdf encrypted by pypdf (RC4-128) with a user password: it cannot be opened
                  without it.
  unicode.pdf     reportlab with DejaVu Sans embedded (a TrueType subset with a ToUnicode map, as most
                  producers write non-Latin text): Greek, Russian, typographic quotes, the euro sign; its
                  second page rotated 90 degrees (/Rotate), whose text reads the same.
  layout.pdf      reportlab platypus, two columns (two frames on the page, text flowing from the left one
                  into the right one) and a table: the columns read one after the other, a table row
                  as one line with its cells in order.
  forms.pdf       reportlab: every line drawn through Form XObjects (`beginForm`/`doForm`, as imposition
                  and some office exporters do), one form nested in another and one drawn translated.
  owner_only.pdf  two_pages.pdf encrypted with an empty user password (printing and copying restrictions
                  only, as many published PDFs are): it opens without a password and must read.
  scanned.pdf     one page holding only an image of text (what a scanner makes): no text layer.
  scanned_jpeg.pdf  a text page, then a page holding only a JPEG of text.
  blank.pdf       one page with a rectangle: no text and no image.
  truncated.pdf   two_pages.pdf cut to its first 300 bytes: a damaged download.
  notes.docx      python-docx: a title, a Heading 1, two paragraphs, a Heading 2 and a paragraph.
  not_a.docx      a DOCX name on bytes that are no ZIP archive.
"""

import io
import json
import os
import pathlib
import shutil

from docx import Document as DocxDocument
from PIL import Image, ImageDraw
from pypdf import PdfReader, PdfWriter
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import getSampleStyleSheet
from reportlab.pdfgen import canvas
from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "crates" / "documents" / "tests" / "fixtures"

# Deterministic output: reportlab stamps the time and a random document id unless told not to.
os.environ["SOURCE_DATE_EPOCH"] = "1764806400"


def two_pages(path):
    pages = [
        ["Quarterly report", "Revenue grew by 12 percent.", "Costs stayed flat."],
        ["Outlook", "We expect a calm winter.", "Café crème and naïve résumé."],
    ]
    c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    for lines in pages:
        y = 780
        c.setFont("Helvetica-Bold", 18)
        c.drawString(72, y, lines[0])
        c.setFont("Helvetica", 12)
        for line in lines[1:]:
            y -= 24
            c.drawString(72, y, line)
        c.showPage()
    c.save()
    return ["\n".join(lines) for lines in pages]


DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def unicode_pdf(path):
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    pdfmetrics.registerFont(TTFont("DejaVuSans", DEJAVU))
    pages = [
        ["Ελληνικά και русский текст", "Zürich – 5 € · naïve “quotes”"],
        ["Страница повёрнута", "This page is rotated."],
    ]
    c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    for number, lines in enumerate(pages):
        if number == 1:
            c.setPageRotation(90)
        c.setFont("DejaVuSans", 14)
        for i, line in enumerate(lines):
            c.drawString(72, 780 - 30 * i, line)
        c.showPage()
    c.save()
    return ["\n".join(lines) for lines in pages]


def layout(path):
    from reportlab.platypus import BaseDocTemplate, Frame, PageTemplate, Table

    styles = getSampleStyleSheet()
    width, height = A4
    column = (width - 72 * 2 - 18) / 2
    frames = [Frame(72, 72, column, height - 144, id="left"), Frame(72 + column + 18, 72, column, height - 144, id="right")]
    doc = BaseDocTemplate(str(path), pagesize=A4, invariant=1, pageTemplates=[PageTemplate(id="two", frames=frames)])
    left = "The left column starts the story. " * 3
    right = "The right column ends it. " * 3
    from reportlab.platypus import FrameBreak

    story = [
        Paragraph("Two columns", styles["Heading1"]),
        Paragraph(left.strip(), styles["BodyText"]),
        FrameBreak(),
        Paragraph(right.strip(), styles["BodyText"]),
        Table([["Item", "Price"], ["Tea", "2 EUR"], ["Bread", "3 EUR"]]),
    ]
    doc.build(story)
    # Wrapped lines: compared with whitespace collapsed.
    return [" ".join(["Two columns", left.strip(), right.strip(), "Item Price", "Tea 2 EUR", "Bread 3 EUR"])]


def forms(path):
    c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    c.beginForm("footer")
    c.setFont("Helvetica", 10)
    c.drawString(72, 60, "Printed in Oslo")
    c.endForm()
    c.beginForm("body")
    c.setFont("Helvetica-Bold", 16)
    c.drawString(72, 780, "Minutes")
    c.setFont("Helvetica", 12)
    c.drawString(72, 750, "The board approved the plan.")
    c.doForm("footer")
    c.endForm()
    c.doForm("body")
    c.saveState()
    c.translate(0, -100)
    c.doForm("footer")
    c.restoreState()
    c.showPage()
    c.save()
    return ["Minutes\nThe board approved the plan.\nPrinted in Oslo\nPrinted in Oslo"]


def report(path):
    styles = getSampleStyleSheet()
    body = (
        "The committee met on Tuesday to review the budget. Every department presented its plan, "
        "and the members agreed to fund the library renovation before the new sports hall."
    )
    story = [
        Paragraph("Annual Review", styles["Title"]),
        Paragraph("Budget", styles["Heading1"]),
        Paragraph(body, styles["BodyText"]),
        PageBreak(),
        Paragraph("Next steps", styles["Heading1"]),
        Paragraph("The treasurer will publish the accounts in March.", styles["BodyText"]),
    ]
    SimpleDocTemplate(str(path), pagesize=A4, invariant=1).build(story)
    # Wrapped lines: the expected text is compared with whitespace collapsed.
    return [" ".join(["Annual Review", "Budget", body]), " ".join(["Next steps", "The treasurer will publish the accounts in March."])]


def encrypted(source, path, user_password):
    writer = PdfWriter(clone_from=PdfReader(str(source)))
    writer.encrypt(user_password=user_password, owner_password="owner", algorithm="RC4-128")
    with open(path, "wb") as f:
        writer.write(f)


def scanned(path):
    image = Image.new("L", (600, 200), 255)
    ImageDraw.Draw(image).text((20, 80), "This text is only pixels", fill=0)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    buffer.seek(0)
    from reportlab.lib.utils import ImageReader

    c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    c.drawImage(ImageReader(buffer), 72, 500, width=450, height=150)
    c.showPage()
    c.save()


def scanned_jpeg(path):
    """A text page, then a page that is only a JPEG photo of text (the scanner's other format)."""
    image = Image.new("RGB", (400, 160), (255, 255, 255))
    ImageDraw.Draw(image).text((20, 60), "A photographed page", fill=(0, 0, 0))
    jpeg = OUT / "_page.jpg"
    image.save(jpeg, format="JPEG", quality=80)
    c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    c.drawString(72, 750, "The first page has text.")
    c.showPage()
    c.drawImage(str(jpeg), 72, 500, width=400, height=160)
    c.showPage()
    c.save()
    jpeg.unlink()


def blank(path):
    """One page with a drawn rectangle and no text or image."""
    c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    c.rect(72, 500, 200, 100)
    c.showPage()
    c.save()


def notes_docx(path):
    doc = DocxDocument()
    doc.add_heading("Project notes", level=0)
    doc.add_heading("Goals", level=1)
    doc.add_paragraph("Ship the reader before the holidays.")
    doc.add_paragraph("Keep every file local.")
    doc.add_heading("Risks", level=2)
    doc.add_paragraph("The scanner makes image-only PDFs.")
    # python-docx stamps the creation time; a fixed one keeps the file stable.
    import datetime

    fixed = datetime.datetime(2026, 12, 4, tzinfo=datetime.timezone.utc)
    doc.core_properties.created = fixed
    doc.core_properties.modified = fixed
    doc.save(str(path))
    return "\n".join(
        [
            "# Project notes",
            "## Goals",
            "Ship the reader before the holidays.",
            "Keep every file local.",
            "### Risks",
            "The scanner makes image-only PDFs.",
        ]
    )


def main():
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    expected = {}
    expected["two_pages.pdf"] = two_pages(OUT / "two_pages.pdf")
    expected["report.pdf"] = report(OUT / "report.pdf")
    expected["unicode.pdf"] = unicode_pdf(OUT / "unicode.pdf")
    expected["forms.pdf"] = forms(OUT / "forms.pdf")
    expected["layout.pdf"] = layout(OUT / "layout.pdf")
    encrypted(OUT / "two_pages.pdf", OUT / "encrypted.pdf", "secret")
    encrypted(OUT / "two_pages.pdf", OUT / "owner_only.pdf", "")
    scanned(OUT / "scanned.pdf")
    scanned_jpeg(OUT / "scanned_jpeg.pdf")
    blank(OUT / "blank.pdf")
    (OUT / "truncated.pdf").write_bytes((OUT / "two_pages.pdf").read_bytes()[:300])
    expected["notes.docx"] = notes_docx(OUT / "notes.docx")
    (OUT / "not_a.docx").write_bytes(b"This is a text file renamed to .docx\n")
    (OUT / "expected.json").write_text(json.dumps(expected, indent=2, ensure_ascii=False) + "\n")
    for f in sorted(OUT.iterdir()):
        print(f"{f.name:16} {f.stat().st_size:7} bytes")


if __name__ == "__main__":
    main()
