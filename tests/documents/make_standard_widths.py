#!/usr/bin/env python3
"""Writes crates/documents/src/pdf/standard_widths.rs: the advance widths (1/1000 em) of the
standard 14 fonts' text faces by Unicode character, from the Adobe AFM metrics reportlab ships
(reportlab.pdfbase._fontdata), glyph names mapped to characters by fontTools' Adobe Glyph List.

    .deps/docs/venv/bin/python tests/documents/make_standard_widths.py

Courier's faces are fixed at 600 and need no table; Helvetica-Oblique has Helvetica's widths
and Helvetica-BoldOblique Helvetica-Bold's.
"""
import pathlib
import subprocess

from fontTools import agl
from reportlab.pdfbase import _fontdata

OUT = pathlib.Path(__file__).resolve().parents[2] / "crates" / "documents" / "src" / "pdf" / "standard_widths.rs"
FACES = ["Helvetica", "Helvetica-Bold", "Times-Roman", "Times-Bold", "Times-Italic", "Times-BoldItalic"]
LATIN = list(range(32, 127)) + list(range(160, 256))


def by_char(face):
    widths = {}
    for name, width in _fontdata.widthsByFontGlyph[face].items():
        text = agl.toUnicode(name)
        if len(text) == 1:
            widths.setdefault(ord(text), width)
    widths.setdefault(0xA0, widths.get(32))  # no-break space draws as space
    widths.setdefault(0xAD, widths.get(ord("-")))  # soft hyphen draws as hyphen
    return widths


lines = [
    "//! Advance widths of the standard 14 fonts' text faces (1/1000 em) by character, for fonts a PDF",
    "//! names without embedding them or giving /Widths. Written by tests/documents/make_standard_widths.py",
    "//! from the Adobe AFM metrics (as reportlab ships them); do not edit.",
    "",
    "/// Characters U+0020..U+007E then U+00A0..U+00FF, in that order.",
    "pub(super) const LATIN_FIRST: [(u32, u32); 2] = [(0x20, 0x7E), (0xA0, 0xFF)];",
    "",
]
for face in FACES:
    widths = by_char(face)
    ident = face.upper().replace("-", "_")
    latin = [widths.get(c, 0) for c in LATIN]
    extra = sorted((c, w) for c, w in widths.items() if c > 0xFF)
    lines.append(f"pub(super) const {ident}_LATIN: [u16; {len(latin)}] = [")
    for i in range(0, len(latin), 16):
        lines.append("    " + ", ".join(str(w) for w in latin[i : i + 16]) + ",")
    lines.append("];")
    lines.append(f"pub(super) const {ident}_OTHER: [(char, u16); {len(extra)}] = [")
    for i in range(0, len(extra), 6):
        lines.append("    " + ", ".join(f"('\\u{{{c:04x}}}', {w})" for c, w in extra[i : i + 6]) + ",")
    lines.append("];")
    lines.append("")
OUT.write_text("\n".join(lines))
# In the house style (rustfmt.toml), so that `cargo fmt --check` passes on what this writes.
subprocess.run(["rustfmt", "--edition", "2021", str(OUT)], check=True)
print(f"wrote {OUT}")
