//! A PDF's text layer, page by page, in reading order. The content stream is walked with the text
//! and graphics state the specification defines (text and transformation matrices, font size,
//! character and word spacing, horizontal scaling, rise), each glyph advanced by its font's own
//! width, so that every glyph has its place on the page: a move to a new line becomes a line
//! break and a real gap on the same line a space. Lines are then put in reading order from their
//! places (src/pdf/layout.rs: an XY-cut, columns one after the other, a footer drawn first read
//! last), running headers set aside at their page's end, and the text normalised
//! (src/pdf/normalize.rs: ligatures written out, soft hyphens and line-end hyphenation resolved,
//! NFC).

mod cmap;
mod font;
mod layout;
mod normalize;
mod standard_widths;

use std::collections::BTreeMap;

use lopdf::content::Content;
use lopdf::{Object, ObjectId};

use self::font::Font;
use self::layout::{Char, PageText};

use crate::error::DocumentProblem;
use crate::limits::{DOCUMENT_PDF_PAGES, MAX_INFLATED_PART_BYTES};
use crate::PageImage;

/// One page's text (1-based page number), whether the page draws images, and, for a page with no
/// text, its largest image (a scanner's page) as a file a vision model can take.
pub(crate) struct PdfPage {
    pub number: u32,
    pub text: String,
    pub has_images: bool,
    /// Characters shown whose text the page's fonts do not give (a font missing from the file, a
    /// CID font without its ToUnicode map), and all characters shown.
    pub unknown: usize,
    pub glyphs: usize,
    /// The page's first line is no bigger than its text's usual size: it may be a running header
    /// (a bigger one is a heading: "Chapter 3" opening each page is no header).
    pub small_first_line: bool,
    /// The page's lowest line (its bottom lowest on the page): it may be a running footer.
    pub lowest_line: Option<String>,
    pub scan: Option<Result<PageImage, String>>,
}

impl PdfPage {
    /// Most of the page's characters cannot be decoded.
    pub fn unreadable(&self) -> bool {
        self.unknown > 0 && self.unknown * 2 >= self.glyphs
    }
}

pub(crate) fn read(bytes: &[u8]) -> Result<Vec<PdfPage>, DocumentProblem> {
    let document = load(bytes)?;
    let pages = document.get_pages();
    let count = u32::try_from(pages.len()).unwrap_or(u32::MAX);
    if count == 0 {
        return Err(DocumentProblem::Damaged { detail: "no pages found".into() });
    }
    if count as u64 > DOCUMENT_PDF_PAGES.value {
        return Err(DocumentProblem::TooManyPages { pages: count, limit: DOCUMENT_PDF_PAGES });
    }
    let mut out = Vec::with_capacity(pages.len());
    for (number, page_id) in pages {
        out.push(read_page(&document, number, page_id)?);
    }
    // Text that cannot be decoded anywhere: the file lost its fonts (a partial download whose
    // cross-reference table was rebuilt) or never had them. Refused, not passed on as garbage.
    if out.iter().all(|p| p.text.is_empty()) && out.iter().any(PdfPage::unreadable) {
        return Err(DocumentProblem::Damaged {
            detail: "the fonts its text is written in are missing or unreadable, so the text cannot be decoded".into(),
        });
    }
    let mut texts: Vec<String> = out.iter_mut().map(|p| std::mem::take(&mut p.text)).collect();
    // Footers first: a header moved after its page's body leaves the footer where it was, and a
    // one-line body under a header is no footer out of place.
    let lowest: Vec<Option<String>> = out.iter_mut().map(|p| p.lowest_line.take()).collect();
    set_aside_running_footers(&mut texts, &lowest);
    let small: Vec<bool> = out.iter().map(|p| p.small_first_line).collect();
    set_aside_running_headers(&mut texts, &small);
    normalize::normalize_pages(&mut texts);
    for (page, text) in out.iter_mut().zip(texts) {
        page.text = text;
    }
    Ok(out)
}

fn load(bytes: &[u8]) -> Result<lopdf::Document, DocumentProblem> {
    match lopdf::Document::load_mem(bytes) {
        // lopdf opens a file encrypted with an empty user password (owner restrictions only);
        // one still marked encrypted needs a password we don't have.
        Ok(document) if document.is_encrypted() && document.encryption_state.is_none() => Err(DocumentProblem::Encrypted),
        Ok(document) => Ok(document),
        Err(lopdf::Error::Decryption(_) | lopdf::Error::InvalidPassword) => Err(DocumentProblem::Encrypted),
        Err(error) if has_encrypt_entry(bytes) => {
            tracing::debug!(%error, "encrypted PDF did not open");
            Err(DocumentProblem::Encrypted)
        }
        Err(error) => Err(DocumentProblem::Damaged { detail: error.to_string() }),
    }
}

fn has_encrypt_entry(bytes: &[u8]) -> bool {
    bytes.windows(8).any(|w| w == b"/Encrypt")
}

type Matrix = [f32; 6];
const IDENTITY: Matrix = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0];

/// `m` then `n` (PDF's row-vector convention: a point p maps to p·m·n).
fn multiply(m: &Matrix, n: &Matrix) -> Matrix {
    [
        m[0] * n[0] + m[1] * n[2],
        m[0] * n[1] + m[1] * n[3],
        m[2] * n[0] + m[3] * n[2],
        m[2] * n[1] + m[3] * n[3],
        m[4] * n[0] + m[5] * n[2] + n[4],
        m[4] * n[1] + m[5] * n[3] + n[5],
    ]
}

fn translation(tx: f32, ty: f32) -> Matrix {
    [1.0, 0.0, 0.0, 1.0, tx, ty]
}

/// Where a point in a matrix's space lands.
fn apply(m: &Matrix, x: f32, y: f32) -> [f32; 2] {
    [x * m[0] + y * m[2] + m[4], x * m[1] + y * m[3] + m[5]]
}

fn operand(object: Option<&Object>) -> f32 {
    object.and_then(|o| o.as_float().ok()).filter(|v| v.is_finite()).unwrap_or(0.0)
}

fn matrix(operands: &[Object]) -> Option<Matrix> {
    (operands.len() == 6).then(|| std::array::from_fn(|i| operand(operands.get(i))))
}

/// How deep forms may nest inside forms (a guard against reference loops).
const MAX_FORM_DEPTH: usize = 8;

/// Fonts by their resource name.
type Fonts<'a> = BTreeMap<Vec<u8>, Font<'a>>;

fn read_page(document: &lopdf::Document, number: u32, page_id: ObjectId) -> Result<PdfPage, DocumentProblem> {
    let damaged = |e: lopdf::Error| DocumentProblem::Damaged { detail: format!("page {number}: {e}") };
    let fonts: Fonts =
        document.get_page_fonts(page_id).map_err(damaged)?.into_iter().map(|(name, font)| (name, Font::load(document, font))).collect();
    let content = document.get_page_content_with_limit(page_id, MAX_INFLATED_PART_BYTES).map_err(damaged)?;
    let content = Content::decode(&content).map_err(damaged)?;
    let (resources, inherited) = document.get_page_resources(page_id).map_err(damaged)?;
    let resources: Vec<&lopdf::Dictionary> =
        resources.into_iter().chain(inherited.iter().filter_map(|id| document.get_dictionary(*id).ok())).collect();

    let mut walker =
        Walker { document, page: number, text: PageText::default(), has_images: false, largest_image: None, marked: Vec::new() };
    walker.walk(&content.operations, &[&fonts], &resources, IDENTITY, 0);
    let (glyphs, unknown) = (walker.text.glyphs, walker.text.unknown);
    let lines = walker.text.finish();
    // The size most of the page's characters are set in.
    let mut sizes: Vec<(f32, usize)> = lines.iter().map(|line| (line.size, line.text.chars().count())).collect();
    sizes.sort_by(|a, b| a.0.total_cmp(&b.0));
    let half = sizes.iter().map(|(_, n)| n).sum::<usize>() / 2;
    let usual = sizes
        .iter()
        .scan(0, |seen, &(size, n)| {
            *seen += n;
            Some((size, *seen))
        })
        .find(|&(_, seen)| seen > half)
        .map_or(0.0, |(size, _)| size);
    let small_first_line = lines.first().is_some_and(|first| first.size <= 1.1 * usual);
    let lowest_line = lines.iter().min_by(|a, b| a.bottom.total_cmp(&b.bottom)).map(|line| line.text.clone());
    let text = lines.into_iter().map(|line| line.text).collect::<Vec<_>>().join("\n");
    let mut page = PdfPage { number, text, has_images: walker.has_images, scan: None, unknown, glyphs, small_first_line, lowest_line };
    if page.unreadable() {
        // What little decodes on a page that is mostly undecodable is noise, not its text.
        page.text.clear();
    } else if page.text.is_empty() {
        page.scan = walker.largest_image.map(page_image);
    }
    Ok(page)
}

/// The graphics state text needs, saved and restored by `q`/`Q`.
#[derive(Clone, Copy)]
struct State<'f, 'a> {
    ctm: Matrix,
    font: Option<&'f Font<'a>>,
    font_size: f32,
    char_spacing: f32,
    word_spacing: f32,
    /// `Tz` over 100.
    horizontal_scaling: f32,
    leading: f32,
    rise: f32,
}

/// Walks a page's content stream, and the forms it draws, placing the glyphs it shows.
struct Walker<'a> {
    document: &'a lopdf::Document,
    page: u32,
    text: PageText,
    has_images: bool,
    /// The page's largest image XObject by pixel count (inline images are too small to be a
    /// scanned page).
    largest_image: Option<&'a lopdf::Stream>,
    /// The marked-content sequences open (`BMC`/`BDC` ... `EMC`), innermost last, with the text
    /// one of them says its glyphs stand for (`/ActualText`).
    marked: Vec<Option<ActualText>>,
}

/// A marked-content sequence's `/ActualText` (PDF 32000-1, 14.9.4): the text its glyphs stand
/// for, given once (with the sequence's first glyph); the others give none. Chromium draws a soft
/// hyphen so: a zero-width space glyph in a span whose actual text is U+00AD.
struct ActualText {
    text: String,
    given: bool,
}

impl<'a> Walker<'a> {
    /// `fonts` and `resources` nearest first (a form's own, then its page's).
    fn walk(
        &mut self,
        operations: &[lopdf::content::Operation],
        fonts: &[&Fonts<'a>],
        resources: &[&'a lopdf::Dictionary],
        start: Matrix,
        depth: usize,
    ) {
        let mut state = State {
            ctm: start,
            font: None,
            font_size: 0.0,
            char_spacing: 0.0,
            word_spacing: 0.0,
            horizontal_scaling: 1.0,
            leading: 0.0,
            rise: 0.0,
        };
        let mut saved: Vec<State> = Vec::new();
        // Sequences a stream leaves open end with it.
        let marked_depth = self.marked.len();
        let mut text_matrix = IDENTITY;
        let mut line_matrix = IDENTITY;

        for operation in operations {
            let operands = &operation.operands;
            match operation.operator.as_str() {
                "q" => saved.push(state),
                "Q" => {
                    if let Some(previous) = saved.pop() {
                        state = previous;
                    }
                }
                "cm" => {
                    if let Some(m) = matrix(operands) {
                        state.ctm = multiply(&m, &state.ctm);
                    }
                }
                "BT" => {
                    text_matrix = IDENTITY;
                    line_matrix = IDENTITY;
                }
                "Tf" => {
                    state.font = operands.first().and_then(|o| o.as_name().ok()).and_then(|name| fonts.iter().find_map(|f| f.get(name)));
                    state.font_size = operand(operands.get(1));
                }
                "Tc" => state.char_spacing = operand(operands.first()),
                "Tw" => state.word_spacing = operand(operands.first()),
                "Tz" => state.horizontal_scaling = operand(operands.first()) / 100.0,
                "TL" => state.leading = operand(operands.first()),
                "Ts" => state.rise = operand(operands.first()),
                "Td" | "TD" => {
                    let (tx, ty) = (operand(operands.first()), operand(operands.get(1)));
                    if operation.operator == "TD" {
                        state.leading = -ty;
                    }
                    line_matrix = multiply(&translation(tx, ty), &line_matrix);
                    text_matrix = line_matrix;
                }
                "Tm" => {
                    if let Some(m) = matrix(operands) {
                        line_matrix = m;
                        text_matrix = m;
                    }
                }
                "T*" | "'" | "\"" => {
                    if operation.operator == "\"" {
                        state.word_spacing = operand(operands.first());
                        state.char_spacing = operand(operands.get(1));
                    }
                    line_matrix = multiply(&translation(0.0, -state.leading), &line_matrix);
                    text_matrix = line_matrix;
                    if operation.operator != "T*" {
                        if let Some(Object::String(bytes, _)) = operands.last() {
                            self.show(bytes, &state, &mut text_matrix);
                        }
                    }
                }
                "Tj" => {
                    if let Some(Object::String(bytes, _)) = operands.first() {
                        self.show(bytes, &state, &mut text_matrix);
                    }
                }
                "TJ" => {
                    for item in operands.first().and_then(|o| o.as_array().ok()).map(Vec::as_slice).unwrap_or_default() {
                        match item {
                            Object::String(bytes, _) => self.show(bytes, &state, &mut text_matrix),
                            Object::Integer(_) | Object::Real(_) => {
                                // A thousandth of the font size, against the writing direction.
                                let tx = -operand(Some(item)) / 1000.0 * state.font_size * state.horizontal_scaling;
                                text_matrix = multiply(&translation(tx, 0.0), &text_matrix);
                            }
                            _ => {}
                        }
                    }
                }
                "Do" => {
                    let name = operands.first().and_then(|o| o.as_name().ok()).unwrap_or_default();
                    self.draw(name, fonts, resources, &state.ctm, depth);
                }
                "BI" => self.has_images = true,
                "BMC" => self.marked.push(None),
                "BDC" => {
                    let actual = self.actual_text(operands.get(1), resources).map(|text| ActualText { text, given: false });
                    self.marked.push(actual);
                }
                "EMC" if self.marked.len() > marked_depth => {
                    self.marked.pop();
                }
                _ => {}
            }
        }
        self.marked.truncate(marked_depth);
    }

    /// A `BDC` property list's `/ActualText`: the list inline, or named in the resources'
    /// `/Properties`.
    fn actual_text(&self, properties: Option<&Object>, resources: &[&'a lopdf::Dictionary]) -> Option<String> {
        let document = self.document;
        let properties = match properties? {
            Object::Dictionary(dict) => dict,
            Object::Name(name) => resources.iter().find_map(|r| {
                r.get_deref(b"Properties", document)
                    .and_then(Object::as_dict)
                    .ok()?
                    .get_deref(name, document)
                    .and_then(Object::as_dict)
                    .ok()
            })?,
            _ => return None,
        };
        lopdf::decode_text_string(properties.get_deref(b"ActualText", document).ok()?).ok()
    }

    /// The text a glyph stands for: its font's, or, inside a sequence with an actual text, that
    /// text for the first glyph and nothing for the others.
    fn glyph_text(&mut self, own: Option<String>) -> Option<String> {
        match self.marked.iter_mut().rev().find_map(Option::as_mut) {
            Some(actual) if actual.given => Some(String::new()),
            Some(actual) => {
                actual.given = true;
                Some(actual.text.clone())
            }
            None => own,
        }
    }

    /// Places a string's glyphs one by one, each advanced by its width (PDF 32000-1, 9.4.4):
    /// tx = (w0 · Tfs + Tc + Tw) · Th, word spacing for a single-byte space only.
    fn show(&mut self, bytes: &[u8], state: &State, text_matrix: &mut Matrix) {
        let glyphs = match state.font {
            Some(font) => font.glyphs(bytes),
            // A font the page names but does not hold: its codes mean nothing.
            None => bytes.iter().map(|_| font::Glyph { text: None, width: 0.5, word_space: false }).collect(),
        };
        for glyph in glyphs {
            let tx = (glyph.width * state.font_size + state.char_spacing + if glyph.word_space { state.word_spacing } else { 0.0 })
                * state.horizontal_scaling;
            let rendering = multiply(text_matrix, &state.ctm);
            let size = state.font_size * rendering[2].hypot(rendering[3]);
            let start = apply(&rendering, 0.0, state.rise);
            let end = apply(&rendering, glyph.width * state.font_size * state.horizontal_scaling, state.rise);
            let direction = [rendering[0], rendering[1]];
            let text = self.glyph_text(glyph.text);
            self.text.push(Char { text, start, end, direction, size });
            *text_matrix = multiply(&translation(tx, 0.0), text_matrix);
        }
    }

    /// An XObject: a form's content is walked (producers put whole pages' text in forms); an
    /// image is noted.
    fn draw(&mut self, name: &[u8], fonts: &[&Fonts<'a>], resources: &[&'a lopdf::Dictionary], ctm: &Matrix, depth: usize) {
        let document = self.document;
        let Some(stream) = resources.iter().find_map(|r| {
            let xobjects = r.get_deref(b"XObject", document).and_then(Object::as_dict).ok()?;
            xobjects.get_deref(name, document).and_then(Object::as_stream).ok()
        }) else {
            return;
        };
        if stream.dict.get(b"Subtype").and_then(Object::as_name).ok() != Some(b"Form".as_slice()) {
            self.has_images = true;
            if self.largest_image.is_none_or(|largest| pixels(largest) < pixels(stream)) {
                self.largest_image = Some(stream);
            }
            return;
        }
        if depth >= MAX_FORM_DEPTH {
            return;
        }
        let content = if stream.dict.get(b"Filter").is_ok() {
            stream.decompressed_content_with_limit(MAX_INFLATED_PART_BYTES)
        } else {
            Ok(stream.content.clone())
        };
        let Ok(content) = content.and_then(|c| Content::decode(&c)) else {
            tracing::debug!(page = self.page, form = %String::from_utf8_lossy(name), "form content unreadable; its text is skipped");
            return;
        };
        let form_matrix = stream.dict.get(b"Matrix").ok().and_then(|m| m.as_array().ok()).and_then(|m| matrix(m)).unwrap_or(IDENTITY);
        let own = stream.dict.get_deref(b"Resources", document).and_then(Object::as_dict).ok();
        let own_fonts: Fonts = own
            .and_then(|r| r.get_deref(b"Font", document).and_then(Object::as_dict).ok())
            .map(|fonts| {
                fonts
                    .iter()
                    .filter_map(|(name, font)| {
                        let font = match font {
                            Object::Reference(id) => document.get_dictionary(*id).ok()?,
                            Object::Dictionary(dict) => dict,
                            _ => return None,
                        };
                        Some((name.clone(), Font::load(document, font)))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let fonts: Vec<&Fonts<'a>> = std::iter::once(&own_fonts).chain(fonts.iter().copied()).collect();
        let resources: Vec<&'a lopdf::Dictionary> = own.into_iter().chain(resources.iter().copied()).collect();
        self.walk(&content.operations, &fonts, &resources, multiply(&form_matrix, ctm), depth + 1);
    }
}

/// A page's first line, no bigger than its text, that recurs as the first line of other pages
/// (numbers aside: "Annual report, page 3") is a running header: it is moved to the end of its page, so that a sentence
/// running over from the page before reads on. Footers need no move: the reading order puts the
/// bottom of a page last.
fn set_aside_running_headers(pages: &mut [String], small_first_line: &[bool]) {
    let key = |line: &str| line.chars().map(|c| if c.is_ascii_digit() { '#' } else { c }).collect::<String>();
    let firsts: Vec<Option<String>> = pages
        .iter()
        .zip(small_first_line)
        .map(|(p, &small)| p.lines().next().filter(|_| small && p.lines().nth(1).is_some()).map(key))
        .collect();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for first in firsts.iter().flatten() {
        *counts.entry(first.as_str()).or_default() += 1;
    }
    let enough = 3.max(pages.len().div_ceil(2));
    for (page, first) in pages.iter_mut().zip(&firsts) {
        if first.as_ref().is_some_and(|f| counts[f.as_str()] >= enough) {
            let (header, body) = page.split_once('\n').unwrap_or((page.as_str(), ""));
            *page = format!("{body}\n{header}");
        }
    }
}

/// A page's lowest line that recurs as the lowest line of other pages (numbers aside) is a running
/// footer: it is moved to the end of its page where the reading order put it elsewhere (a footer
/// close under the left column of two is read with that column, before the right one).
fn set_aside_running_footers(pages: &mut [String], lowest: &[Option<String>]) {
    let key = |line: &str| line.chars().map(|c| if c.is_ascii_digit() { '#' } else { c }).collect::<String>();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for line in lowest.iter().flatten() {
        *counts.entry(key(line)).or_default() += 1;
    }
    let enough = 3.max(pages.len().div_ceil(2));
    for (page, footer) in pages.iter_mut().zip(lowest) {
        let Some(footer) = footer.as_deref().filter(|f| counts[&key(f)] >= enough) else { continue };
        let mut lines: Vec<&str> = page.split('\n').collect();
        if let Some(at) = lines.iter().position(|line| *line == footer).filter(|&at| at + 1 < lines.len()) {
            let footer = lines.remove(at);
            lines.push(footer);
            *page = lines.join("\n");
        }
    }
}

fn dimension(stream: &lopdf::Stream, key: &[u8]) -> u32 {
    stream.dict.get(key).and_then(Object::as_i64).ok().and_then(|v| u32::try_from(v).ok()).unwrap_or(0)
}

fn pixels(stream: &lopdf::Stream) -> u64 {
    u64::from(dimension(stream, b"Width")) * u64::from(dimension(stream, b"Height"))
}

/// A scanned page's image as a file: a JPEG's bytes as they are, 8-bit gray or RGB pixels as a
/// PNG. Other encodings give the reason they are not read.
fn page_image(stream: &lopdf::Stream) -> Result<PageImage, String> {
    let (width, height) = (dimension(stream, b"Width"), dimension(stream, b"Height"));
    let filters = stream.filters().unwrap_or_default();
    match filters.last().copied() {
        Some(b"DCTDecode") => {
            // The JPEG's bytes as they are, once any filters before it (ASCII85, as reportlab
            // writes) are undone.
            let bytes = if filters.len() == 1 {
                stream.content.clone()
            } else {
                let mut outer = stream.clone();
                let before: Vec<Object> = filters[..filters.len() - 1].iter().map(|f| Object::Name(f.to_vec())).collect();
                outer.dict.set("Filter", Object::Array(before));
                outer.dict.remove(b"DecodeParms");
                outer
                    .decompressed_content_with_limit(MAX_INFLATED_PART_BYTES)
                    .map_err(|e| format!("its JPEG image could not be unwrapped ({e})"))?
            };
            return Ok(PageImage { mime: "image/jpeg", bytes, width, height });
        }
        Some(b"JBIG2Decode") => return Err("its image is JBIG2-encoded, which Confab does not decode".into()),
        Some(b"CCITTFaxDecode") => return Err("its image is fax-encoded (CCITT), which Confab does not decode".into()),
        Some(b"JPXDecode") => return Err("its image is JPEG 2000, which Confab does not decode".into()),
        _ => {}
    }
    let bits = stream.dict.get(b"BitsPerComponent").and_then(Object::as_i64).unwrap_or(0);
    let color = match stream.dict.get(b"ColorSpace").and_then(Object::as_name) {
        Ok(b"DeviceGray") => png::ColorType::Grayscale,
        Ok(b"DeviceRGB") => png::ColorType::Rgb,
        _ => return Err("its image uses a colour space other than gray or RGB, which Confab does not convert".into()),
    };
    if bits != 8 {
        return Err(format!("its image has {bits} bits per colour, and Confab reads 8"));
    }
    let channels = if color == png::ColorType::Rgb { 3 } else { 1 };
    let expected = width as usize * height as usize * channels;
    if expected == 0 || expected > MAX_INFLATED_PART_BYTES {
        return Err(format!("its image is {width}×{height} pixels, outside what Confab reads"));
    }
    let data =
        if filters.is_empty() { Ok(stream.content.clone()) } else { stream.decompressed_content_with_limit(MAX_INFLATED_PART_BYTES) };
    let data = data.map_err(|e| format!("its image could not be decoded ({e})"))?;
    let data = data.get(..expected).ok_or("its image holds fewer pixels than it says")?;
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, width, height);
    encoder.set_color(color);
    encoder.set_depth(png::BitDepth::Eight);
    encoder
        .write_header()
        .and_then(|mut writer| writer.write_image_data(data))
        .map_err(|e| format!("its image could not be encoded ({e})"))?;
    Ok(PageImage { mime: "image/png", bytes, width, height })
}

#[cfg(test)]
mod tests {
    use lopdf::{dictionary, Dictionary, Document, Object, Stream};

    use crate::{read_document, DocumentProblem};

    /// A PDF of one page per content stream, with these fonts as every page's resources.
    fn pdf(contents: &[&str], fonts: impl Fn(&mut Document) -> Dictionary) -> Vec<u8> {
        pdf_with(contents, |document| dictionary! { "Font" => fonts(document) })
    }

    /// A PDF of one page per content stream, with these resources.
    fn pdf_with(contents: &[&str], resources: impl Fn(&mut Document) -> Dictionary) -> Vec<u8> {
        let mut document = Document::with_version("1.5");
        let pages_id = document.new_object_id();
        let resources = resources(&mut document);
        let kids: Vec<Object> = contents
            .iter()
            .map(|content| {
                let content = document.add_object(Stream::new(dictionary! {}, content.as_bytes().to_vec()));
                document
                    .add_object(dictionary! {
                        "Type" => "Page", "Parent" => pages_id, "Contents" => content,
                        "Resources" => resources.clone(),
                        "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
                    })
                    .into()
            })
            .collect();
        let count = kids.len() as i64;
        document.objects.insert(pages_id, Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => count }));
        let catalog = document.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
        document.trailer.set("Root", catalog);
        let mut bytes = Vec::new();
        document.save_to(&mut bytes).unwrap_or_else(|e| panic!("{e}"));
        bytes
    }

    fn helvetica(document: &mut Document) -> Dictionary {
        let font = document.add_object(dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica" });
        dictionary! { "F1" => font }
    }

    /// Each letter placed by its own move, by Helvetica's real advance (as fpdf2 and Chromium
    /// place glyphs): one word, and a real gap makes the next (half an em per letter split
    /// "Efficient" into "E fficient").
    #[test]
    fn letters_placed_one_by_one_at_their_widths_stay_one_word() {
        let widths =
            [('E', 667.0), ('f', 278.0), ('f', 278.0), ('i', 222.0), ('c', 500.0), ('i', 222.0), ('e', 556.0), ('n', 556.0), ('t', 278.0)];
        let mut content = String::from("BT /F1 10 Tf 72 700 Td ");
        for (letter, width) in widths {
            content.push_str(&format!("({letter}) Tj {} 0 Td ", width / 100.0));
        }
        // A gap of 2.8 (0.28 em, a space's width) before the next word.
        content.push_str("2.8 0 Td (office) Tj ET");
        let document = read_document("a.pdf", &pdf(&[&content], helvetica)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(document.text(), "Efficient office");
    }

    /// A marked-content sequence's actual text stands for its glyphs: Chromium draws a soft
    /// hyphen as a space glyph in a span whose actual text is U+00AD (then moves back over it),
    /// which read as drawn splits the word.
    #[test]
    fn actual_text_replaces_the_glyphs_it_spans() {
        let content = "BT /F1 10 Tf 72 700 Td (lab) Tj 13.34 0 Td /Span <</ActualText <FEFF00AD>>> BDC ( ) Tj EMC 0 0 Td (oratory) Tj \
                       ET BT /F1 10 Tf 72 680 Td /P <</MCID 3>> BDC (an ) Tj /Span /Ligature BDC (X) Tj EMC (ce) Tj EMC ET";
        let bytes = pdf_with(&[content], |document| {
            let ligature = document.add_object(dictionary! { "ActualText" => Object::string_literal("offi") });
            dictionary! { "Font" => helvetica(document), "Properties" => dictionary! { "Ligature" => ligature } }
        });
        let document = read_document("chromium.pdf", &bytes).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(document.text(), "laboratory\nan office");
    }

    #[test]
    fn text_whose_font_is_missing_is_refused_as_damaged() {
        let bytes = pdf(&["BT /F9 12 Tf 72 700 Td (Invisible) Tj ET"], helvetica);
        let problem = read_document("lost.pdf", &bytes).err().map(|e| e.problem);
        assert!(
            matches!(&problem, Some(DocumentProblem::Damaged { detail }) if detail.contains("fonts its text is written in are missing")),
            "{problem:?}"
        );
    }

    /// Two-byte codes with no ToUnicode map (what a truncated file keeps of its fonts) are not
    /// read as Latin-1.
    #[test]
    fn a_cid_font_without_its_map_is_refused_not_read_as_bytes() {
        let bytes = pdf(&["BT /F1 12 Tf 72 700 Td <002c0051> Tj ET"], |document| {
            let font =
                document.add_object(dictionary! { "Type" => "Font", "Subtype" => "Type0", "Encoding" => "Identity-H", "BaseFont" => "X" });
            dictionary! { "F1" => font }
        });
        assert!(matches!(read_document("cut.pdf", &bytes).err().map(|e| e.problem), Some(DocumentProblem::Damaged { .. })));
    }

    /// The same line at the top of every page, its page number aside, is set aside at the page's
    /// end so that the body runs on from page to page.
    #[test]
    fn a_running_header_is_set_aside() {
        let page =
            |n: u32| format!("BT /F1 9 Tf 72 800 Td (Annual report, page {n}) Tj ET BT /F1 12 Tf 72 700 Td (Body of page {n}.) Tj ET");
        let pages: Vec<String> = (1..=3).map(page).collect();
        let pages: Vec<&str> = pages.iter().map(String::as_str).collect();
        let document = read_document("report.pdf", &pdf(&pages, helvetica)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(document.sections[1].text, "Body of page 2.\nAnnual report, page 2");
        // A bigger first line on every page is a heading, not a header.
        let chapter = |n: u32| format!("BT /F1 14 Tf 72 800 Td (Chapter {n}) Tj ET BT /F1 9 Tf 72 700 Td (Body of page {n}.) Tj ET");
        let chapters: Vec<String> = (1..=3).map(chapter).collect();
        let chapters: Vec<&str> = chapters.iter().map(String::as_str).collect();
        let document = read_document("book.pdf", &pdf(&chapters, helvetica)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(document.sections[1].text, "Chapter 2\nBody of page 2.");
        // Two pages are no evidence of a running header.
        let document = read_document("two.pdf", &pdf(&pages[..2], helvetica)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(document.sections[1].text, "Annual report, page 2\nBody of page 2.");
    }

    /// A footer close under the left of two columns is read with that column; repeated on every
    /// page, it is a running footer and goes to its page's end.
    #[test]
    fn a_running_footer_is_set_aside() {
        let page = |n: u32| {
            // Words, not numbers, tell the pages' lines apart (numbers aside, a first line that
            // recurs is a running header).
            let word = ["one", "two", "three"][n as usize - 1];
            let mut content = String::from("BT /F1 10 Tf ");
            for (k, y) in [700, 686, 672].into_iter().enumerate() {
                content.push_str(&format!("1 0 0 1 72 {y} Tm (Left column line {k} of page {word}.) Tj "));
                content.push_str(&format!("1 0 0 1 320 {y} Tm (Right column line {k} of page {word}.) Tj "));
            }
            content + &format!("1 0 0 1 72 658 Tm (Field notes, page {n}) Tj ET")
        };
        let pages: Vec<String> = (1..=3).map(page).collect();
        let pages: Vec<&str> = pages.iter().map(String::as_str).collect();
        let document = read_document("notes.pdf", &pdf(&pages, helvetica)).unwrap_or_else(|e| panic!("{e}"));
        let text = &document.sections[1].text;
        assert!(text.starts_with("Left column line 0 of page two.\nLeft column line 1"), "{text}");
        assert!(text.ends_with("Right column line 2 of page two.\nField notes, page 2"), "{text}");
        // Two pages are no evidence of a running footer.
        let document = read_document("two.pdf", &pdf(&pages[..2], helvetica)).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            document.sections[1].text.contains("Left column line 2 of page two.\nField notes, page 2\nRight"),
            "{}",
            document.sections[1].text
        );
    }

    #[test]
    fn an_undecodable_page_is_left_out_with_a_note() {
        let bytes = pdf(&["BT /F1 12 Tf 72 700 Td (Readable) Tj ET", "BT /F9 12 Tf 72 700 Td (Lost) Tj ET"], helvetica);
        let document = read_document("half.pdf", &bytes).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(document.sections[0].text, "Readable");
        assert_eq!(document.sections[1].text, "");
        assert_eq!(document.notes.len(), 1, "{:?}", document.notes);
        assert!(document.notes[0].starts_with("page 2 is left out: its text cannot be decoded"), "{:?}", document.notes);
    }
}
