#!/usr/bin/env python3
"""A PDF corpus made at test time from known text, by real producers, for scoring how well Confab
reads PDFs beside other readers (tests/documents/score.py).

    .deps/docs/venv/bin/python tests/documents/make_corpus.py OUT_DIR

Needs (scripts/setup.sh installs them, pinned, into .deps/docs/venv): reportlab, fpdf2 (with uharfbuzz for
HarfBuzz shaping), PyMuPDF, pycairo, typst (the typst compiler as a Python package), pypdf, from
PyPI; Ghostscript and qpdf from Debian; DejaVu Sans (fonts-dejavu-core). A producer that is
missing is skipped with a line on stderr, so a partial corpus still scores.

For each PDF it writes NAME.pdf and NAME.txt, the text the producer was given, pages separated by
form feeds, in reading order (a footer at the end of its page, footnotes at the end of their
page); a page that is only an image has an empty text (no reader is expected to OCR it). A file
that must be refused (damaged or encrypted) gets NAME.bad instead, saying why.

  reportlab_columns   reportlab platypus, Times-Roman not embedded (no /Widths: the standard-14
                      metrics), two justified columns, a footer drawn before the body, then a page
                      with /Rotate 90.
  fpdf2_shaped        fpdf2 with HarfBuzz shaping on DejaVu Sans (glyph by glyph, ligatures),
                      justified.
  fpdf2_core          fpdf2, Helvetica (standard 14, not embedded), justified with word spacing.
  pymupdf_fonts       PyMuPDF insert_textbox with DejaVu Sans (Identity-H, a ToUnicode map), then a
                      page that is only an image of text.
  pymupdf_badcmap     pymupdf_fonts with a bad entry added to each ToUnicode map (as MuPDF writes:
                      `<14fd> <14ff> <10300>`, a destination that is no UTF-16).
  cairo_text          pycairo's toy text API, DejaVu Sans subset, lines placed one by one.
  typst_report        typst: a title, headings, justified and hyphenated paragraphs, a footnote,
                      several pages.
  typst_headers       typst, four pages each with a running header (a title and the page number);
                      the source puts it after its page's body (set aside, as Confab does).
  reportlab_interleaved  reportlab canvas, two columns drawn row by row (a left line, then the
                      right line at the same height), as some exporters draw pages.
  reportlab_caption   reportlab canvas, three pages each with a footer drawn first, a paragraph,
                      a table whose caption runs up its left side (a text matrix turned 90
                      degrees, drawn after the table), and a paragraph under it.
  gs_embedded         Ghostscript's ps2pdf from hand-written PostScript (Helvetica, Times, Courier),
                      fonts embedded; Times set with the fi and fl ligature glyphs.
  gs_standard         the same PostScript with the standard 14 fonts not embedded.
  qpdf_owner          cairo_text encrypted by qpdf with only an owner password (AES-256): it opens
                      without a password and must read.
  bad_encrypted       cairo_text encrypted by qpdf with a user password.
  bad_truncated       pymupdf_fonts rewritten by qpdf (content first, fonts last) and cut in half (a
                      partial download: the cross-reference table must be rebuilt and the fonts'
                      ToUnicode map and program are gone).
  bad_fonts_missing   pymupdf_fonts with every font reference pointing at an object that is not
                      there.

Damaged DOCX and HTML files, made with the standard library, that Confab must refuse (the PDF
readers are not run on them; NAME.bad says why):
  bad_docx_truncated  a Word document cut in half (a partial download: the ZIP's directory is lost).
  bad_docx_no_body    a ZIP with a Word document's other parts but no word/document.xml.
  bad_docx_malformed  word/document.xml cut off mid-paragraph (well stored, badly formed XML).
  bad_docx_corrupt    word/document.xml's compressed bytes damaged (its checksum fails).
  bad_html_gzip       a web page saved gzip-compressed under its .html name.
  bad_html_binary     an image saved under a .html name.
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap

os.environ.setdefault("SOURCE_DATE_EPOCH", "1764806400")
DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

# Prose with ligature pairs (fi, fl, ff, ffi, ffl), long words a hyphenator splits, and numbers.
PARAGRAPHS = [
    "The soil laboratory clarifies its field procedures before the first survey of the season. "
    "Efficient office workflows depend on a shared calendar, and the staff reflect on them every "
    "Friday afternoon.",
    "Each sample is labelled, weighed and photographed; the difference between two measurements "
    "of the same core must stay below three percent, or the technician repeats the whole analysis "
    "from the beginning.",
    "Independent reviewers describe the documentation as thorough but difficult to navigate, and "
    "they recommend an index of abbreviations, a glossary of instruments and a short overview of "
    "responsibilities.",
    "Offline backups are written to two separate drives each evening, and the affluent donors who "
    "funded the new freezer receive a quarterly summary of the archive's growth and condition.",
    "During the flood of April the basement storage was evacuated within four hours; nothing was "
    "lost, although several fragile labels had to be transcribed again from the inventory.",
    "Interoperability with the regional database remains the chief technical challenge, because "
    "its schema changes without notice and its export files shuffle the column order.",
    "Volunteers fluent in Spanish and Portuguese translate the outreach leaflets, which explain "
    "how farmers can submit their own samples and what the results will tell them.",
    "The next annual meeting will discuss staffing, the replacement of the aging spectrometer, "
    "and a proposal to publish the raw measurements under an open licence.",
]


def say(message):
    print(f"make_corpus: {message}", file=sys.stderr)


def write_text(out, name, pages):
    (out / f"{name}.txt").write_text("\f".join(pages), encoding="utf-8")


def reportlab_columns(out):
    from reportlab.lib.enums import TA_JUSTIFY
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import BaseDocTemplate, Frame, NextPageTemplate, PageBreak, PageTemplate, Paragraph

    width, height = A4
    body = ParagraphStyle("body", fontName="Times-Roman", fontSize=11, leading=14, alignment=TA_JUSTIFY, spaceAfter=6)
    footers = []

    def footer(canvas, doc):
        text = f"Field notes page {doc.page}"
        footers.append(text)
        canvas.setFont("Helvetica", 8)
        canvas.drawString(72, 40, text)

    def rotated(canvas, doc):
        canvas.setPageRotation(90)
        footer(canvas, doc)

    gap = 18
    column = (width - 144 - gap) / 2
    two = PageTemplate("two", [Frame(72, 72, column, height - 144, id="left"), Frame(72 + column + gap, 72, column, height - 144, id="right")], onPage=footer)
    turned = PageTemplate("turned", [Frame(72, 72, width - 144, height - 144)], onPage=rotated)
    doc = BaseDocTemplate(str(out / "reportlab_columns.pdf"), pagesize=A4, pageTemplates=[two, turned], invariant=1)
    first, second = PARAGRAPHS[:6], PARAGRAPHS[6:]
    story = [Paragraph(p, body) for p in first] + [NextPageTemplate("turned"), PageBreak()] + [Paragraph(p, body) for p in second]
    doc.build(story)
    write_text(out, "reportlab_columns", ["\n".join(first) + "\n" + footers[0], "\n".join(second) + "\n" + footers[1]])


def fpdf2_shaped(out):
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.add_font("DejaVu", fname=DEJAVU)
    pdf.set_text_shaping(True)
    pdf.add_page()
    pdf.set_font("DejaVu", size=12)
    pages = [PARAGRAPHS[:4], PARAGRAPHS[4:]]
    for i, paragraphs in enumerate(pages):
        if i:
            pdf.add_page()
        for p in paragraphs:
            pdf.multi_cell(0, 7, p, align="J", new_x="LMARGIN", new_y="NEXT")
            pdf.ln(3)
    pdf.output(str(out / "fpdf2_shaped.pdf"))
    write_text(out, "fpdf2_shaped", ["\n".join(p) for p in pages])


def fpdf2_core(out):
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    for p in PARAGRAPHS:
        pdf.multi_cell(0, 6, p, align="J", new_x="LMARGIN", new_y="NEXT")
        pdf.ln(2)
    pdf.output(str(out / "fpdf2_core.pdf"))
    write_text(out, "fpdf2_core", ["\n".join(PARAGRAPHS)])


def pymupdf_fonts(out, name="pymupdf_fonts"):
    import pymupdf as fitz

    doc = fitz.open()
    page = doc.new_page()
    page.insert_font(fontname="dejavu", fontfile=DEJAVU)
    text = "Inspection log, part two\n\n" + "\n\n".join(PARAGRAPHS[:4])
    rest = page.insert_textbox(fitz.Rect(72, 72, 523, 770), text, fontname="dejavu", fontsize=11)
    assert rest >= 0, "text did not fit"
    # A page that is only an image of text (what a scanner makes).
    image_page = doc.new_page()
    scratch = fitz.open()
    p = scratch.new_page(width=400, height=200)
    p.insert_text((20, 50), "This line is only pixels.", fontsize=14)
    pix = p.get_pixmap(dpi=100)
    image_page.insert_image(fitz.Rect(72, 72, 472, 272), pixmap=pix)
    doc.subset_fonts()
    doc.save(str(out / f"{name}.pdf"), garbage=0, deflate=True, use_objstms=0)
    write_text(out, name, [text, ""])
    return text


def pymupdf_badcmap(out):
    import pymupdf as fitz

    text = pymupdf_fonts(out, "pymupdf_badcmap")
    doc = fitz.open(str(out / "pymupdf_badcmap.pdf"))
    changed = 0
    for xref in range(1, doc.xref_length()):
        if doc.xref_is_stream(xref):
            data = doc.xref_stream(xref)
            if b"beginbfrange" in data or b"beginbfchar" in data:
                data = data.replace(b"endbfrange", b"<14fd> <14ff> <10300>\nendbfrange", 1) if b"endbfrange" in data else data.replace(b"endbfchar", b"endbfchar\n1 beginbfrange\n<14fd> <14ff> <10300>\nendbfrange", 1)
                doc.update_stream(xref, data)
                changed += 1
    assert changed, "no ToUnicode map found"
    doc.save(str(out / "pymupdf_badcmap.tmp.pdf"), garbage=0, deflate=True, use_objstms=0)
    doc.close()
    os.replace(out / "pymupdf_badcmap.tmp.pdf", out / "pymupdf_badcmap.pdf")
    write_text(out, "pymupdf_badcmap", [text, ""])


def cairo_text(out, name="cairo_text"):
    import cairo

    pages = [PARAGRAPHS[:4], PARAGRAPHS[4:]]
    surface = cairo.PDFSurface(str(out / f"{name}.pdf"), 595, 842)
    ctx = cairo.Context(surface)
    ctx.select_font_face("DejaVu Sans")
    ctx.set_font_size(11)
    for paragraphs in pages:
        y = 80
        for p in paragraphs:
            for line in textwrap.wrap(p, 80):
                ctx.move_to(72, y)
                ctx.show_text(line)
                y += 15
            y += 8
        ctx.show_page()
    surface.finish()
    write_text(out, name, ["\n".join(p) for p in pages])


def typst_report(out):
    import typst

    body = []
    pages_text = []
    sections = [("Site survey", PARAGRAPHS[0:3]), ("Storage and backups", PARAGRAPHS[3:6]), ("Outreach", PARAGRAPHS[6:8])]
    for title, paragraphs in sections:
        body.append(f"= {title}\n\n" + "\n\n".join(paragraphs) + "\n\n#pagebreak()\n")
    note = "The survey protocol is described in the appendix."
    source = (
        '#set page(paper: "a5", margin: 2cm)\n#set text(font: "DejaVu Sans", size: 10pt, lang: "en", hyphenate: true)\n'
        "#set par(justify: true)\n"
        + "".join(body).replace(PARAGRAPHS[0], PARAGRAPHS[0] + f"#footnote[{note}]", 1).rstrip().removesuffix("#pagebreak()")
    )
    src = out / "typst_report.typ"
    src.write_text(source, encoding="utf-8")
    typst.compile(str(src), output=str(out / "typst_report.pdf"), font_paths=[os.path.dirname(DEJAVU)])
    src.unlink()
    # Typst numbers footnotes: the marker "1" follows the sentence, the note comes at the page end.
    for title, paragraphs in sections:
        text = title + "\n" + "\n".join(paragraphs)
        if PARAGRAPHS[0] in paragraphs:
            text = text.replace(PARAGRAPHS[0], PARAGRAPHS[0] + "1", 1) + "\n1 " + note
        pages_text.append(text)
    write_text(out, "typst_report", pages_text)


def typst_headers(out):
    import typst

    sections = [PARAGRAPHS[0:2], PARAGRAPHS[2:4], PARAGRAPHS[4:6], PARAGRAPHS[6:8]]
    header = "Field survey report"
    source = (
        '#set page(paper: "a5", margin: 2cm, header: [' + header + ' #h(1fr) #context counter(page).display()])\n'
        '#set text(font: "DejaVu Sans", size: 10pt, lang: "en", hyphenate: false)\n'
        + "\n#pagebreak()\n".join("\n\n".join(paragraphs) for paragraphs in sections)
    )
    src = out / "typst_headers.typ"
    src.write_text(source, encoding="utf-8")
    typst.compile(str(src), output=str(out / "typst_headers.pdf"), font_paths=[os.path.dirname(DEJAVU)])
    src.unlink()
    # The running header set aside after its page's body.
    write_text(out, "typst_headers", ["\n".join(paragraphs) + f"\n{header} {n}" for n, paragraphs in enumerate(sections, 1)])


def reportlab_interleaved(out):
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    left, right = " ".join(PARAGRAPHS[:3]), " ".join(PARAGRAPHS[3:6])
    left_lines, right_lines = textwrap.wrap(left, 44), textwrap.wrap(right, 44)
    c = canvas.Canvas(str(out / "reportlab_interleaved.pdf"), pagesize=A4, invariant=1)
    c.setFont("Helvetica", 10)
    y = 780
    # Row by row across both columns, as some exporters draw a page.
    for i in range(max(len(left_lines), len(right_lines))):
        if i < len(left_lines):
            c.drawString(56, y, left_lines[i])
        if i < len(right_lines):
            c.drawString(310, y, right_lines[i])
        y -= 13
    c.showPage()
    c.save()
    write_text(out, "reportlab_interleaved", [left + "\n" + right])



def reportlab_caption(out):
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(out / "reportlab_caption.pdf"), pagesize=A4, invariant=1)
    pages = []
    shelves = [("A1", "42", "3"), ("A2", "17", "5"), ("B1", "8", "0"), ("B2", "23", "2"), ("C1", "11", "4"), ("C2", "6", "1"), ("D1", "30", "6")]
    for n in range(3):
        footer = f"Cold store inventory, page {n + 1}"
        c.setFont("Helvetica", 8)
        c.drawString(72, 40, footer)
        above, below = textwrap.wrap(PARAGRAPHS[2 * n], 90), textwrap.wrap(PARAGRAPHS[2 * n + 1], 90)
        c.setFont("Helvetica", 10)
        y = 780
        for line in above:
            c.drawString(72, y, line)
            y -= 13
        y -= 30
        rows = [("Shelf", "Cores", "Kits")] + shelves[n : n + 6]
        top = y
        for row in rows:
            for x, cell in zip((120, 220, 320), row):
                c.drawString(x, y, cell)
            y -= 14
        caption = f"Table {n + 1}: cores and kits per shelf"
        c.saveState()
        c.setFont("Helvetica", 8)
        middle = (top + y + 14) / 2 + 3
        c.translate(100, middle - c.stringWidth(caption, "Helvetica", 8) / 2)
        c.rotate(90)
        c.drawString(0, 0, caption)
        c.restoreState()
        y -= 30
        for line in below:
            c.drawString(72, y, line)
            y -= 13
        c.showPage()
        pages.append("\n".join([" ".join(above), caption, *(" ".join(r) for r in rows), " ".join(below), footer]))
    c.save()
    write_text(out, "reportlab_caption", pages)


POSTSCRIPT_LINES = [
    ("Helvetica", 14, "Inventory of the cold store"),
    ("Times-Roman", 11, PARAGRAPHS[4]),
    ("Times-Roman", 11, PARAGRAPHS[5]),
    ("Courier", 10, "Shelf A3 holds 42 cores; shelf B1 holds 17 cores and 3 field kits."),
]


def ghostscript(out, name, embed):
    if not shutil.which("gs"):
        raise RuntimeError("Ghostscript (gs) is not installed")
    lines = []
    for font, size, text in POSTSCRIPT_LINES:
        lines.extend((font, size, line) for line in textwrap.wrap(text, 95 if font != "Courier" else 80))
    ps = ["%!PS", "/Latin { findfont dup length dict begin { 1 index /FID ne { def } { pop pop } ifelse } forall /Encoding ISOLatin1Encoding def currentdict end } def"]
    y = 760
    for font, size, line in lines:
        escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        if font.startswith("Times"):
            # The fi and fl ligature glyphs of StandardEncoding (octal 256 and 257), as TeX and
            # other typesetters set them: readers get U+FB01 and U+FB02.
            escaped = escaped.replace("fi", "\\256").replace("fl", "\\257")
        ps.append(f"/{font} findfont {size} scalefont setfont 72 {y} moveto ({escaped}) show")
        y -= size + 5
    ps.append("showpage")
    src = out / f"{name}.ps"
    src.write_text("\n".join(ps) + "\n", encoding="latin-1")
    options = ["-dEmbedAllFonts=true"] if embed else ["-dEmbedAllFonts=false", "-dSubsetFonts=false"]
    subprocess.run(["gs", "-q", "-dNOPAUSE", "-dBATCH", "-dSAFER", "-sDEVICE=pdfwrite", *options, f"-sOutputFile={out / name}.pdf", str(src)], check=True)
    src.unlink()
    write_text(out, name, ["\n".join(text for _, _, text in POSTSCRIPT_LINES)])


def qpdf_files(out):
    if not shutil.which("qpdf"):
        raise RuntimeError("qpdf is not installed")
    cairo_text(out, "qpdf_owner")
    plain = out / "qpdf_owner.plain.pdf"
    os.replace(out / "qpdf_owner.pdf", plain)
    subprocess.run(["qpdf", "--encrypt", "", "owner-secret", "256", "--", str(plain), str(out / "qpdf_owner.pdf")], check=True)
    subprocess.run(["qpdf", "--encrypt", "user-secret", "owner-secret", "256", "--", str(plain), str(out / "bad_encrypted.pdf")], check=True)
    plain.unlink()
    (out / "bad_encrypted.bad").write_text("encrypted with a user password\n")


def damaged(out):
    import pymupdf as fitz

    pymupdf_fonts(out, "bad_source")
    # qpdf writes the pages' content before their fonts (and the image between); cut in half, as a
    # partial download is: the pages and their content survive, the fonts' maps and programs do not.
    ordered = out / "bad_ordered.pdf"
    subprocess.run(["qpdf", "--object-streams=disable", "--stream-data=uncompress", str(out / "bad_source.pdf"), str(ordered)], check=True)
    data = ordered.read_bytes()
    ordered.unlink()
    kept = data[: len(data) // 2]
    assert b"BT" in kept and b"begincmap" not in kept and b"/Length1" not in kept, "the cut does not fall between content and fonts"
    (out / "bad_truncated.pdf").write_bytes(kept)
    (out / "bad_truncated.bad").write_text("truncated: the fonts were in the lost part\n")

    doc = fitz.open(str(out / "bad_source.pdf"))
    for page in doc:
        fonts_key = "Resources/Font"
        kind, fonts = doc.xref_get_key(page.xref, fonts_key)
        if kind == "dict":
            rewritten = re.sub(r"\d+ 0 R", "9999 0 R", fonts)
            doc.xref_set_key(page.xref, fonts_key, rewritten)
        elif kind == "xref":
            font_dict = int(fonts.split()[0])
            doc.update_object(font_dict, re.sub(r"\d+ 0 R", "9999 0 R", doc.xref_object(font_dict, compressed=True)))
    doc.save(str(out / "bad_fonts_missing.pdf"), garbage=0, use_objstms=0)
    doc.close()
    (out / "bad_source.pdf").unlink()
    (out / "bad_source.txt").unlink()
    (out / "bad_fonts_missing.bad").write_text("every font reference points at an object that is not there\n")


DOCX_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
    "</Types>"
)
DOCX_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>'
    "</Relationships>"
)


def docx_bytes(paragraphs, body=True, document_xml=None, compression=None):
    """A minimal Word document (the parts Word needs to open it) holding these paragraphs."""
    import io
    import zipfile
    from xml.sax.saxutils import escape

    compression = zipfile.ZIP_DEFLATED if compression is None else compression
    if document_xml is None:
        document_xml = (
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
            '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>'
            + "".join(f"<w:p><w:r><w:t>{escape(p)}</w:t></w:r></w:p>" for p in paragraphs)
            + "</w:body></w:document>"
        )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as z:
        for name, data in [("[Content_Types].xml", DOCX_CONTENT_TYPES), ("_rels/.rels", DOCX_RELS)] + ([("word/document.xml", document_xml)] if body else []):
            info = zipfile.ZipInfo(name, date_time=(2025, 12, 4, 0, 0, 0))
            info.compress_type = compression
            z.writestr(info, data)
    return buffer.getvalue(), document_xml


def damaged_docx_and_html(out):
    import gzip
    import zlib

    whole, xml = docx_bytes(PARAGRAPHS[:4])
    (out / "bad_docx_truncated.docx").write_bytes(whole[: len(whole) // 2])
    (out / "bad_docx_truncated.bad").write_text("a Word document cut in half\n")

    (out / "bad_docx_no_body.docx").write_bytes(docx_bytes(PARAGRAPHS[:4], body=False)[0])
    (out / "bad_docx_no_body.bad").write_text("no word/document.xml\n")

    cut = xml[: xml.index(PARAGRAPHS[2][:20]) + 10]
    (out / "bad_docx_malformed.docx").write_bytes(docx_bytes([], document_xml=cut)[0])
    (out / "bad_docx_malformed.bad").write_text("word/document.xml cut off mid-paragraph\n")

    # Flip bytes in the middle of document.xml's deflated data: it inflates to something else (or
    # not at all), and its CRC-32 fails.
    data = bytearray(whole)
    start = data.index(b"word/document.xml") + len("word/document.xml")
    compressed = len(zlib.compress(xml.encode(), 9)) // 2
    for i in range(start + compressed // 2, start + compressed // 2 + 8):
        data[i] ^= 0x5A
    (out / "bad_docx_corrupt.docx").write_bytes(bytes(data))
    (out / "bad_docx_corrupt.bad").write_text("word/document.xml's compressed bytes damaged\n")

    page = "<!DOCTYPE html><html><head><title>Field notes</title></head><body>" + "".join(f"<p>{p}</p>" for p in PARAGRAPHS[:4]) + "</body></html>"
    (out / "bad_html_gzip.html").write_bytes(gzip.compress(page.encode(), mtime=0))
    (out / "bad_html_gzip.bad").write_text("a gzip-compressed page under a .html name\n")

    import pymupdf as fitz

    scratch = fitz.open()
    p = scratch.new_page(width=300, height=80)
    p.insert_text((20, 40), "Field notes", fontsize=14)
    (out / "bad_html_binary.html").write_bytes(p.get_pixmap(dpi=72).tobytes("png"))
    (out / "bad_html_binary.bad").write_text("an image under a .html name\n")


PRODUCERS = [
    ("reportlab_columns", reportlab_columns),
    ("fpdf2_shaped", fpdf2_shaped),
    ("fpdf2_core", fpdf2_core),
    ("pymupdf_fonts", pymupdf_fonts),
    ("pymupdf_badcmap", pymupdf_badcmap),
    ("cairo_text", cairo_text),
    ("typst_report", typst_report),
    ("typst_headers", typst_headers),
    ("reportlab_interleaved", reportlab_interleaved),
    ("reportlab_caption", reportlab_caption),
    ("gs_embedded", lambda out: ghostscript(out, "gs_embedded", True)),
    ("gs_standard", lambda out: ghostscript(out, "gs_standard", False)),
    ("qpdf", qpdf_files),
    ("damaged", damaged),
    ("damaged_docx_and_html", damaged_docx_and_html),
]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    made = 0
    for name, make in PRODUCERS:
        try:
            make(out)
            made += 1
        except Exception as error:  # noqa: BLE001  a missing producer skips its files only
            say(f"{name} skipped: {type(error).__name__}: {error}")
    say(f"{made}/{len(PRODUCERS)} producers wrote {len(list(out.glob('*.pdf')))} PDFs into {out}")
    if made < len(PRODUCERS):
        sys.exit(1)


if __name__ == "__main__":
    main()
