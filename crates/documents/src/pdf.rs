//! A PDF's text layer, page by page, in reading order. The content stream is walked with the text
//! and graphics state that places each string (text matrix, transformation matrix, font size),
//! so that a move to a new line becomes a line break and a gap on the same line a space; the
//! order is the stream's, which is the order producers write text in.

use std::collections::BTreeMap;

use lopdf::content::Content;
use lopdf::Encoding;
use lopdf::{Object, ObjectId};

use crate::error::DocumentProblem;
use crate::limits::{MAX_INFLATED_PART_BYTES, MAX_PDF_PAGES};
use crate::PageImage;

/// One page's text (1-based page number), whether the page draws images, and, for a page with no
/// text, its largest image (a scanner's page) as a file a vision model can take.
pub(crate) struct PdfPage {
    pub number: u32,
    pub text: String,
    pub has_images: bool,
    pub scan: Option<Result<PageImage, String>>,
}

pub(crate) fn read(bytes: &[u8]) -> Result<Vec<PdfPage>, DocumentProblem> {
    let document = load(bytes)?;
    let pages = document.get_pages();
    let count = u32::try_from(pages.len()).unwrap_or(u32::MAX);
    if count == 0 {
        return Err(DocumentProblem::Damaged { detail: "no pages found".into() });
    }
    if count > MAX_PDF_PAGES {
        return Err(DocumentProblem::TooManyPages { pages: count, limit: MAX_PDF_PAGES });
    }
    let mut out = Vec::with_capacity(pages.len());
    for (number, page_id) in pages {
        out.push(read_page(&document, number, page_id)?);
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

fn operand(object: Option<&Object>) -> f32 {
    object.and_then(|o| o.as_float().ok()).unwrap_or(0.0)
}

fn matrix(operands: &[Object]) -> Option<Matrix> {
    (operands.len() == 6).then(|| std::array::from_fn(|i| operand(operands.get(i))))
}

/// Where the last string went, to decide what separates it from the next.
struct Placed {
    x_start: f32,
    x_end: f32,
    y: f32,
    size: f32,
}

/// Text as it is laid out on the page.
#[derive(Default)]
struct PageWriter {
    text: String,
    last: Option<Placed>,
    /// A positioning operator ran since the last string (without one, strings continue).
    moved: bool,
}

impl PageWriter {
    fn push(&mut self, text: &str, x: f32, y: f32, size: f32) {
        if text.is_empty() {
            return;
        }
        // Glyph widths are the fonts' business; half an em per character is close enough to tell
        // a word gap from the next word.
        let width = text.chars().count() as f32 * 0.5 * size;
        if let Some(last) = &self.last {
            let line = size.max(last.size).max(1.0);
            if self.moved && (y - last.y).abs() > 0.5 * line {
                self.end_line();
            } else if self.moved
                && (x > last.x_end + 0.1 * line || x < last.x_start)
                && !self.text.ends_with(char::is_whitespace)
                && !text.starts_with(char::is_whitespace)
            {
                self.text.push(' ');
            }
        }
        self.text.push_str(text);
        self.last = Some(Placed { x_start: x, x_end: x + width, y, size });
        self.moved = false;
    }

    fn end_line(&mut self) {
        let trimmed = self.text.trim_end_matches([' ', '\t']).len();
        self.text.truncate(trimmed);
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push('\n');
        }
    }
}

/// How deep forms may nest inside forms (a guard against reference loops).
const MAX_FORM_DEPTH: usize = 8;

type Encodings<'a> = BTreeMap<Vec<u8>, Encoding<'a>>;

fn read_page(document: &lopdf::Document, number: u32, page_id: ObjectId) -> Result<PdfPage, DocumentProblem> {
    let damaged = |e: lopdf::Error| DocumentProblem::Damaged { detail: format!("page {number}: {e}") };
    let fonts = document.get_page_fonts(page_id).map_err(damaged)?;
    let encodings = encodings_of(document, number, fonts.into_iter());
    let content = document.get_page_content_with_limit(page_id, MAX_INFLATED_PART_BYTES).map_err(damaged)?;
    let content = Content::decode(&content).map_err(damaged)?;
    let (resources, inherited) = document.get_page_resources(page_id).map_err(damaged)?;
    let resources: Vec<&lopdf::Dictionary> =
        resources.into_iter().chain(inherited.iter().filter_map(|id| document.get_dictionary(*id).ok())).collect();

    let mut walker = Walker { document, page: number, writer: PageWriter::default(), has_images: false, largest_image: None };
    walker.walk(&content.operations, &[&encodings], &resources, IDENTITY, 0);
    walker.writer.end_line();
    let text = walker.writer.text.trim_end().to_string();
    let scan = if text.is_empty() { walker.largest_image.map(page_image) } else { None };
    Ok(PdfPage { number, text, has_images: walker.has_images, scan })
}

/// Each font's encoding, by its resource name; a font whose encoding cannot be read is left out
/// (its strings are decoded as Latin-1).
fn encodings_of<'a>(
    document: &'a lopdf::Document,
    page: u32,
    fonts: impl Iterator<Item = (Vec<u8>, &'a lopdf::Dictionary)>,
) -> Encodings<'a> {
    fonts
        .filter_map(|(name, font)| match font.get_font_encoding_with_limit(document, MAX_INFLATED_PART_BYTES) {
            Ok(encoding) => Some((name, encoding)),
            Err(error) => {
                tracing::debug!(page, font = %String::from_utf8_lossy(&name), %error, "font encoding unreadable");
                None
            }
        })
        .collect()
}

/// Walks a page's content stream, and the forms it draws, writing the text it shows.
struct Walker<'a> {
    document: &'a lopdf::Document,
    page: u32,
    writer: PageWriter,
    has_images: bool,
    /// The page's largest image XObject by pixel count (inline images are too small to be a
    /// scanned page).
    largest_image: Option<&'a lopdf::Stream>,
}

impl<'a> Walker<'a> {
    /// `encodings` and `resources` nearest first (a form's own, then its page's).
    fn walk(
        &mut self,
        operations: &[lopdf::content::Operation],
        encodings: &[&Encodings<'a>],
        resources: &[&'a lopdf::Dictionary],
        start: Matrix,
        depth: usize,
    ) {
        let mut ctm = start;
        let mut saved: Vec<Matrix> = Vec::new();
        let mut text_matrix = IDENTITY;
        let mut line_matrix = IDENTITY;
        let mut leading = 0.0f32;
        let mut font_size = 0.0f32;
        let mut encoding: Option<&Encoding> = None;

        for operation in operations {
            let operands = &operation.operands;
            match operation.operator.as_str() {
                "q" => saved.push(ctm),
                "Q" => ctm = saved.pop().unwrap_or(start),
                "cm" => {
                    if let Some(m) = matrix(operands) {
                        ctm = multiply(&m, &ctm);
                    }
                }
                "BT" => {
                    text_matrix = IDENTITY;
                    line_matrix = IDENTITY;
                }
                "Tf" => {
                    encoding = operands.first().and_then(|o| o.as_name().ok()).and_then(|name| encodings.iter().find_map(|e| e.get(name)));
                    font_size = operand(operands.get(1));
                }
                "TL" => leading = operand(operands.first()),
                "Td" | "TD" => {
                    let (tx, ty) = (operand(operands.first()), operand(operands.get(1)));
                    if operation.operator == "TD" {
                        leading = -ty;
                    }
                    line_matrix = multiply(&translation(tx, ty), &line_matrix);
                    text_matrix = line_matrix;
                    self.writer.moved = true;
                }
                "Tm" => {
                    if let Some(m) = matrix(operands) {
                        line_matrix = m;
                        text_matrix = m;
                        self.writer.moved = true;
                    }
                }
                "T*" | "'" | "\"" => {
                    line_matrix = multiply(&translation(0.0, -leading), &line_matrix);
                    text_matrix = line_matrix;
                    self.writer.moved = true;
                    if operation.operator != "T*" {
                        let string =
                            operands.last().map(|o| decode_shown(encoding, std::slice::from_ref(o), font_size)).unwrap_or_default();
                        place(&mut self.writer, &string, &text_matrix, &ctm, font_size);
                    }
                }
                "Tj" | "TJ" => {
                    let string = decode_shown(encoding, operands, font_size);
                    place(&mut self.writer, &string, &text_matrix, &ctm, font_size);
                    // The next string continues where this one ended, wherever that is.
                    text_matrix = multiply(&translation(string.chars().count() as f32 * 0.5 * font_size, 0.0), &text_matrix);
                }
                "Do" => {
                    let name = operands.first().and_then(|o| o.as_name().ok()).unwrap_or_default();
                    self.draw(name, encodings, resources, &ctm, depth);
                }
                "BI" => self.has_images = true,
                _ => {}
            }
        }
    }

    /// An XObject: a form's content is walked (producers put whole pages' text in forms); an
    /// image is noted.
    fn draw(&mut self, name: &[u8], encodings: &[&Encodings<'a>], resources: &[&'a lopdf::Dictionary], ctm: &Matrix, depth: usize) {
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
        let own_fonts = own
            .and_then(|r| r.get_deref(b"Font", document).and_then(Object::as_dict).ok())
            .map(|fonts| {
                let fonts = fonts.iter().filter_map(|(name, font)| {
                    let font = match font {
                        Object::Reference(id) => document.get_dictionary(*id).ok()?,
                        Object::Dictionary(dict) => dict,
                        _ => return None,
                    };
                    Some((name.clone(), font))
                });
                encodings_of(document, self.page, fonts)
            })
            .unwrap_or_default();
        let encodings: Vec<&Encodings<'a>> = std::iter::once(&own_fonts).chain(encodings.iter().copied()).collect();
        let resources: Vec<&'a lopdf::Dictionary> = own.into_iter().chain(resources.iter().copied()).collect();
        self.walk(&content.operations, &encodings, &resources, multiply(&form_matrix, ctm), depth + 1);
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

fn place(writer: &mut PageWriter, string: &str, text_matrix: &Matrix, ctm: &Matrix, font_size: f32) {
    let rendering = multiply(text_matrix, ctm);
    let scale = rendering[2].hypot(rendering[3]);
    writer.push(string, rendering[4], rendering[5], font_size * scale);
}

/// The text a `Tj`/`TJ`/`'`/`"` shows: its strings decoded through the font's encoding, with a
/// space where a `TJ` adjustment moves right by more than a fifth of an em (a word gap in
/// justified text).
fn decode_shown(encoding: Option<&Encoding>, operands: &[Object], font_size: f32) -> String {
    let mut out = String::new();
    for operand in operands {
        match operand {
            Object::String(bytes, _) => match encoding.map(|e| lopdf::Document::decode_text(e, bytes)) {
                Some(Ok(text)) => out.push_str(&text),
                // No usable font encoding: PDFDocEncoding's printable range is Latin-1.
                _ => out.extend(bytes.iter().map(|&b| b as char)),
            },
            Object::Array(items) => out.push_str(&decode_shown(encoding, items, font_size)),
            Object::Integer(_) | Object::Real(_) => {
                let adjust = operand.as_float().unwrap_or(0.0);
                if adjust < -200.0 && !out.ends_with(' ') && font_size != 0.0 {
                    out.push(' ');
                }
            }
            _ => {}
        }
    }
    out.replace('\u{0}', "")
}
