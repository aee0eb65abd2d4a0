//! A PDF font as text extraction needs it: how a shown string splits into codes, what text each
//! code stands for, and how far each glyph advances. Widths as the specification defines them:
//! a simple font's `/Widths` from `/FirstChar` and its descriptor's `/MissingWidth`, a CID font's
//! `/W` and `/DW`, a Type 3 font's widths through its `/FontMatrix`, and the standard 14 fonts'
//! metrics when a PDF names one without widths.

use lopdf::{Dictionary, Document, Encoding, Object};

use super::cmap::ToUnicode;
use super::standard_widths as sw;
use crate::limits::MAX_INFLATED_PART_BYTES;

/// One glyph of a shown string.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Glyph {
    /// The text it stands for; `None` when the font gives no way to know (a CID font without a
    /// ToUnicode map, a code the map leaves out and no encoding covers).
    pub text: Option<String>,
    /// Its advance in text space for a font size of 1 (a thousandth of the glyph-space width).
    pub width: f32,
    /// A single-byte code 32, which word spacing (`Tw`) widens.
    pub word_space: bool,
}

pub(super) struct Font<'a> {
    /// Type 0: two-byte codes.
    composite: bool,
    /// The font's ToUnicode map, its bad entries skipped.
    to_unicode: Option<ToUnicode>,
    /// A simple font's encoding (`None` for composite fonts; for a simple font whose encoding
    /// lopdf cannot read, codes fall back to the standard encoding through lopdf).
    encoding: Option<Encoding<'a>>,
    /// A composite font's CMap maps codes to Unicode itself (UCS-2 / UTF-16 CMaps).
    unicode_cmap: bool,
    widths: Widths,
    /// Glyph space to text space (1/1000, or a Type 3 font's `/FontMatrix` a).
    scale: f32,
}

enum Widths {
    Simple { first: u32, widths: Vec<f32>, missing: f32 },
    Cid { ranges: Vec<(u32, u32, f32)>, default: f32 },
    Standard(Standard),
}

/// A standard 14 font's widths.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Standard {
    Fixed(f32),
    Table(&'static [u16; 191], &'static [(char, u16)]),
}

/// The advance taken when nothing better is known: half an em.
const FALLBACK_WIDTH: f32 = 500.0;

impl<'a> Font<'a> {
    pub fn load(document: &'a Document, font: &'a Dictionary) -> Font<'a> {
        let subtype = font.get(b"Subtype").and_then(Object::as_name).unwrap_or(b"");
        let composite = subtype == b"Type0";
        let to_unicode = font
            .get_deref(b"ToUnicode", document)
            .and_then(Object::as_stream)
            .ok()
            .and_then(|stream| {
                if stream.dict.get(b"Filter").is_ok() {
                    stream.decompressed_content_with_limit(MAX_INFLATED_PART_BYTES).ok()
                } else {
                    Some(stream.content.clone())
                }
            })
            .map(|data| ToUnicode::parse(&data))
            .filter(|map| !map.is_empty());
        let encoding_name = font.get_deref(b"Encoding", document).and_then(Object::as_name).unwrap_or(b"");
        let unicode_cmap = composite && (encoding_name.ends_with(b"UCS2-H") || encoding_name.ends_with(b"UTF16-H"));
        let encoding = if composite {
            None
        } else {
            match font.get_font_encoding_with_limit(document, MAX_INFLATED_PART_BYTES) {
                Ok(Encoding::UnicodeMapEncoding(_)) | Err(_) => None,
                Ok(encoding) => Some(encoding),
            }
        };
        let (widths, scale) = if composite { (cid_widths(document, font), 0.001) } else { simple_widths(document, font, subtype) };
        Font { composite, to_unicode, encoding, unicode_cmap, widths, scale }
    }

    /// The glyphs of a shown string.
    pub fn glyphs(&self, bytes: &[u8]) -> Vec<Glyph> {
        if self.composite {
            bytes
                .chunks_exact(2)
                .map(|pair| {
                    let code = u32::from(u16::from_be_bytes([pair[0], pair[1]]));
                    let text = self.mapped(2, code).or_else(|| self.unicode_cmap.then(|| char::from_u32(code).map(String::from)).flatten());
                    Glyph { text, width: self.width(code, None), word_space: false }
                })
                .collect()
        } else {
            bytes
                .iter()
                .map(|&byte| {
                    let code = u32::from(byte);
                    let text = self.mapped(1, code).or_else(|| {
                        let encoding = self.encoding.as_ref()?;
                        let text = encoding.bytes_to_string(&[byte]).ok()?;
                        (!text.is_empty()).then_some(text)
                    });
                    let width = self.width(code, text_char(&text));
                    Glyph { text, width, word_space: byte == b' ' }
                })
                .collect()
        }
    }

    /// What the ToUnicode map says a code stands for.
    fn mapped(&self, length: u8, code: u32) -> Option<String> {
        self.to_unicode.as_ref()?.get(length, code).map(str::to_string)
    }

    /// The advance of a code in text space for a font size of 1.
    fn width(&self, code: u32, character: Option<char>) -> f32 {
        let glyph_space = match &self.widths {
            Widths::Simple { first, widths, missing } => {
                code.checked_sub(*first).and_then(|i| widths.get(i as usize)).copied().unwrap_or(*missing)
            }
            Widths::Cid { ranges, default } => {
                ranges.iter().find(|(lo, hi, _)| (*lo..=*hi).contains(&code)).map_or(*default, |(_, _, w)| *w)
            }
            Widths::Standard(standard) => standard_width(*standard, character),
        };
        glyph_space * self.scale
    }
}

fn text_char(text: &Option<String>) -> Option<char> {
    let text = text.as_deref()?;
    let mut chars = text.chars();
    let first = chars.next()?;
    chars.next().is_none().then_some(first)
}

fn number(object: &Object) -> Option<f32> {
    object.as_float().ok()
}

/// A simple font's widths and glyph-space scale.
fn simple_widths(document: &Document, font: &Dictionary, subtype: &[u8]) -> (Widths, f32) {
    let scale = if subtype == b"Type3" {
        font.get_deref(b"FontMatrix", document)
            .and_then(Object::as_array)
            .ok()
            .and_then(|m| m.first().and_then(number))
            .filter(|a| a.is_finite() && *a != 0.0)
            .map_or(0.001, f32::abs)
    } else {
        0.001
    };
    let missing = font
        .get_deref(b"FontDescriptor", document)
        .and_then(Object::as_dict)
        .ok()
        .and_then(|d| d.get_deref(b"MissingWidth", document).ok().and_then(number))
        .unwrap_or(0.0);
    let widths = font.get_deref(b"Widths", document).and_then(Object::as_array).ok().map(|widths| {
        widths.iter().map(|w| document.dereference(w).ok().and_then(|(_, w)| number(w)).unwrap_or(missing)).collect::<Vec<f32>>()
    });
    match widths {
        Some(widths) if !widths.is_empty() => {
            let first = font.get(b"FirstChar").and_then(Object::as_i64).ok().and_then(|f| u32::try_from(f).ok()).unwrap_or(0);
            (Widths::Simple { first, widths, missing }, scale)
        }
        _ => {
            let base = font.get(b"BaseFont").and_then(Object::as_name).unwrap_or(b"");
            match standard_font(base) {
                Some(standard) => (Widths::Standard(standard), 0.001),
                // No widths at all: the missing width if there is one, else half an em.
                None => {
                    (Widths::Simple { first: 0, widths: Vec::new(), missing: if missing > 0.0 { missing } else { FALLBACK_WIDTH } }, scale)
                }
            }
        }
    }
}

/// A CID font's `/W` (`c [w1 w2 ...]` and `c_first c_last w`) and `/DW`, from the Type 0
/// font's descendant.
fn cid_widths(document: &Document, font: &Dictionary) -> Widths {
    let descendant = font
        .get_deref(b"DescendantFonts", document)
        .and_then(Object::as_array)
        .ok()
        .and_then(|fonts| fonts.first())
        .and_then(|f| document.dereference(f).ok())
        .and_then(|(_, f)| f.as_dict().ok());
    let Some(descendant) = descendant else {
        return Widths::Cid { ranges: Vec::new(), default: 1000.0 };
    };
    let default = descendant.get_deref(b"DW", document).ok().and_then(number).unwrap_or(1000.0);
    let mut ranges = Vec::new();
    if let Ok(w) = descendant.get_deref(b"W", document).and_then(Object::as_array) {
        let items: Vec<&Object> = w.iter().map(|o| document.dereference(o).map_or(o, |(_, o)| o)).collect();
        let mut i = 0;
        while i < items.len() {
            let Some(first) = items[i].as_i64().ok().and_then(|f| u32::try_from(f).ok()) else {
                i += 1;
                continue;
            };
            match items.get(i + 1) {
                Some(Object::Array(widths)) => {
                    for (offset, w) in widths.iter().enumerate() {
                        if let Some(w) = number(w) {
                            let cid = first + offset as u32;
                            ranges.push((cid, cid, w));
                        }
                    }
                    i += 2;
                }
                Some(last) => {
                    if let (Some(last), Some(w)) =
                        (last.as_i64().ok().and_then(|l| u32::try_from(l).ok()), items.get(i + 2).and_then(|w| number(w)))
                    {
                        ranges.push((first, last, w));
                    }
                    i += 3;
                }
                None => break,
            }
        }
    }
    Widths::Cid { ranges, default }
}

/// The standard 14 face a base font name stands for (a subset tag `ABCDEF+` and the common
/// Windows names accepted), with its widths.
fn standard_font(base: &[u8]) -> Option<Standard> {
    let name = String::from_utf8_lossy(base);
    let name = match name.split_once('+') {
        Some((tag, rest)) if tag.len() == 6 && tag.chars().all(|c| c.is_ascii_uppercase()) => rest.to_string(),
        _ => name.to_string(),
    };
    let lower = name.to_ascii_lowercase().replace([' ', '-', ','], "");
    let bold = lower.contains("bold");
    let italic = lower.contains("italic") || lower.contains("oblique");
    if lower.starts_with("courier") {
        return Some(Standard::Fixed(600.0));
    }
    if lower.starts_with("helvetica") || lower.starts_with("arial") {
        return Some(if bold {
            Standard::Table(&sw::HELVETICA_BOLD_LATIN, &sw::HELVETICA_BOLD_OTHER)
        } else {
            Standard::Table(&sw::HELVETICA_LATIN, &sw::HELVETICA_OTHER)
        });
    }
    if lower.starts_with("times") {
        return Some(match (bold, italic) {
            (false, false) => Standard::Table(&sw::TIMES_ROMAN_LATIN, &sw::TIMES_ROMAN_OTHER),
            (true, false) => Standard::Table(&sw::TIMES_BOLD_LATIN, &sw::TIMES_BOLD_OTHER),
            (false, true) => Standard::Table(&sw::TIMES_ITALIC_LATIN, &sw::TIMES_ITALIC_OTHER),
            (true, true) => Standard::Table(&sw::TIMES_BOLDITALIC_LATIN, &sw::TIMES_BOLDITALIC_OTHER),
        });
    }
    None
}

fn standard_width(standard: Standard, character: Option<char>) -> f32 {
    match standard {
        Standard::Fixed(width) => width,
        Standard::Table(latin, other) => {
            let Some(c) = character else { return FALLBACK_WIDTH };
            let code = c as u32;
            let mut offset = 0;
            for (first, last) in sw::LATIN_FIRST {
                if (first..=last).contains(&code) {
                    return f32::from(latin[(offset + code - first) as usize]);
                }
                offset += last - first + 1;
            }
            other.binary_search_by_key(&c, |(c, _)| *c).map_or(FALLBACK_WIDTH, |i| f32::from(other[i].1))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lopdf::{dictionary, Stream};

    fn widths_of(document: &Document, font: &Dictionary, bytes: &[u8]) -> Vec<f32> {
        Font::load(document, font).glyphs(bytes).iter().map(|g| (g.width * 1000.0).round()).collect()
    }

    #[test]
    fn simple_font_widths_from_first_char_and_missing_width() {
        let mut document = Document::with_version("1.7");
        let descriptor = document.add_object(dictionary! { "Type" => "FontDescriptor", "MissingWidth" => 250 });
        let font = dictionary! {
            "Type" => "Font", "Subtype" => "TrueType", "BaseFont" => "Foo", "FirstChar" => 65,
            "Widths" => vec![600.into(), 700.into()], "FontDescriptor" => descriptor, "Encoding" => "WinAnsiEncoding",
        };
        assert_eq!(widths_of(&document, &font, b"ABC"), vec![600.0, 700.0, 250.0]);
        let glyphs = Font::load(&document, &font).glyphs(b"A B");
        assert_eq!(glyphs[0].text.as_deref(), Some("A"));
        assert!(glyphs[1].word_space && !glyphs[0].word_space);
    }

    #[test]
    fn standard_fonts_without_widths_use_their_metrics() {
        let document = Document::with_version("1.7");
        let helvetica = dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica", "Encoding" => "WinAnsiEncoding" };
        // Helvetica's AFM: i 222, W 944, space 278.
        assert_eq!(widths_of(&document, &helvetica, b"iW "), vec![222.0, 944.0, 278.0]);
        let times = dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Times-Bold" };
        assert_eq!(widths_of(&document, &times, b"a"), vec![500.0]);
        let courier = dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "ABCDEF+Courier-Oblique" };
        assert_eq!(widths_of(&document, &courier, b"iW"), vec![600.0, 600.0]);
    }

    #[test]
    fn cid_font_widths_from_w_and_dw() {
        let mut document = Document::with_version("1.7");
        let descendant = document.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "CIDFontType2", "DW" => 800,
            "W" => vec![3.into(), vec![278.into(), 300.into()].into(), 10.into(), 20.into(), 556.into()],
        });
        let map = document.add_object(Stream::new(
            dictionary! {},
            b"/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n/CIDSystemInfo <</Registry (Adobe) /Ordering (UCS) /Supplement 0>> def\n\
              /CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n\
              2 beginbfchar\n<0003> <0020>\n<000a> <0041>\nendbfchar\nendcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n"
                .to_vec(),
        ));
        let font = dictionary! {
            "Type" => "Font", "Subtype" => "Type0", "Encoding" => "Identity-H",
            "DescendantFonts" => vec![descendant.into()], "ToUnicode" => map,
        };
        assert_eq!(widths_of(&document, &font, &[0, 3, 0, 4, 0, 10, 0, 20, 0, 21]), vec![278.0, 300.0, 556.0, 556.0, 800.0]);
        let glyphs = Font::load(&document, &font).glyphs(&[0, 3, 0, 10, 0, 11]);
        assert_eq!(glyphs[1].text.as_deref(), Some("A"));
        // A code the map leaves out is unknown, not a Latin-1 guess.
        assert_eq!(glyphs[2].text, None);
    }

    /// MuPDF's map with a range whose destination is no UTF-16: the rest still reads (the whole
    /// map was dropped, and the text came out as raw bytes).
    #[test]
    fn a_to_unicode_map_with_a_bad_entry_still_reads() {
        let mut document = Document::with_version("1.7");
        let map = document.add_object(Stream::new(
            dictionary! {},
            b"begincmap 1 begincodespacerange <0000> <FFFF> endcodespacerange\n\
              3 beginbfrange <0003> <0061> <0020> <14fd> <14ff> <10300> <0100> <01ff> <013e> endbfrange endcmap"
                .to_vec(),
        ));
        let font = dictionary! { "Type" => "Font", "Subtype" => "Type0", "Encoding" => "Identity-H", "ToUnicode" => map };
        let text: String = Font::load(&document, &font).glyphs(&[0, 0x2c, 0, 0x51, 1, 0x02]).into_iter().filter_map(|g| g.text).collect();
        assert_eq!(text, "In\u{140}");
    }

    #[test]
    fn type3_widths_go_through_the_font_matrix() {
        let document = Document::with_version("1.7");
        let font = dictionary! {
            "Type" => "Font", "Subtype" => "Type3", "FirstChar" => 97, "Widths" => vec![5.into()],
            "FontMatrix" => vec![0.1.into(), 0.into(), 0.into(), 0.1.into(), 0.into(), 0.into()],
        };
        assert_eq!(widths_of(&document, &font, b"a"), vec![500.0]);
    }
}
