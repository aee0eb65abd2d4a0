//! Every limit on what strangers' bytes may make Confab do, in one place.
//!
//! Attachments, documents, model files, API bodies and tool results come from anyone: each is
//! checked against a limit before the expensive work, and a refusal names the limit and its
//! value (`media.image_pixels (40,000,000 pixels)`), so that a person can tell which rule they met
//! and a developer can find it here. docs/limits.md lists them all (a test keeps it true).
//!
//! A limit here is a *default*: where a caller may pass its own (the media crate's
//! `MediaLimits`, `confab serve --body-limit-mb`), it starts from this value.

use std::fmt;

/// One limit: a stable dotted name (the crate's area, then what is counted), its value and unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub name: &'static str,
    pub value: u64,
    pub unit: Unit,
    /// What it bounds, for docs/limits.md.
    pub what: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Bytes,
    Pixels,
    Seconds,
    Frames,
    Pages,
    Levels,
    Steps,
    Items,
    Hertz,
}

impl Unit {
    pub fn word(self) -> &'static str {
        match self {
            Unit::Bytes => "bytes",
            Unit::Pixels => "pixels",
            Unit::Seconds => "seconds",
            Unit::Frames => "frames",
            Unit::Pages => "pages",
            Unit::Levels => "levels",
            Unit::Steps => "steps",
            Unit::Items => "items",
            Unit::Hertz => "Hz",
        }
    }
}

impl Limit {
    /// The value as a `usize`, for lengths in memory (every limit fits one on 64-bit systems).
    pub const fn as_usize(&self) -> usize {
        self.value as usize
    }

    pub const fn as_f64(&self) -> f64 {
        self.value as f64
    }
}

/// `media.image_pixels (40,000,000 pixels)`: how a refusal names the limit it met.
impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({} {})", self.name, grouped(self.value), self.unit.word())
    }
}

/// `40000000` as `40,000,000`.
pub fn grouped(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

macro_rules! limits {
    ($($(#[doc = $doc:literal])* $id:ident = $name:literal, $value:expr, $unit:ident, $what:literal;)*) => {
        $( $(#[doc = $doc])* pub const $id: Limit = Limit { name: $name, value: $value, unit: Unit::$unit, what: $what }; )*
        /// Every limit, in the order docs/limits.md lists them.
        pub const ALL: &[Limit] = &[$($id),*];
    };
}

limits! {
    // Attachments (crates/media), checked from headers before decoding and again while decoding.
    /// 200 MB: a long lossless recording or a camera-sized TIFF, far beyond what a chat needs.
    MEDIA_FILE_BYTES = "media.file_bytes", 200_000_000, Bytes, "an attached image, clip or video file";
    /// 40 MP covers current phone and camera photos; models downscale to under 1 MP anyway, and
    /// a 40 MP RGB image is 120 MB decoded.
    MEDIA_IMAGE_PIXELS = "media.image_pixels", 40_000_000, Pixels, "one image (width × height, from its header)";
    /// 30 minutes (115 MB of 16 kHz mono f32); audio towers see at most a few minutes a turn.
    MEDIA_AUDIO_SECONDS = "media.audio_seconds", 30 * 60, Seconds, "one audio clip";
    /// Videos' frames are sampled (Qwen3-VL: 2 a second), so a long one costs thousands of soft
    /// tokens and minutes of tower time.
    /// 768 kHz is the highest rate recorders and DACs offer; the resamplers' work grows with the
    /// ratio.
    MEDIA_AUDIO_SAMPLE_RATE = "media.audio_sample_rate", 768_000, Hertz, "an audio clip's sample rate, from its header";
    MEDIA_VIDEO_SECONDS = "media.video_seconds", 10 * 60, Seconds, "one video";
    MEDIA_VIDEO_FRAMES = "media.video_frames", 36_000, Frames, "frames in one video file, from its container";
    /// 8K is 33 MP.
    MEDIA_VIDEO_FRAME_PIXELS = "media.video_frame_pixels", 40_000_000, Pixels, "one video frame";

    // Documents (crates/documents).
    DOCUMENT_FILE_BYTES = "document.file_bytes", 50_000_000, Bytes, "an attached document file";
    DOCUMENT_PDF_PAGES = "document.pdf_pages", 1_000, Pages, "pages in one PDF";
    /// A small file can hold a lot of compressed text.
    DOCUMENT_TEXT_BYTES = "document.text_bytes", 20_000_000, Bytes, "text one document yields (UTF-8)";
    /// A guard against decompression bombs.
    DOCUMENT_INFLATED_PART_BYTES = "document.inflated_part_bytes", 64_000_000, Bytes, "one compressed part inflated (a PDF stream, a DOCX's XML part)";
    /// Word writes a dozen parts, hundreds with many embedded images; millions of tiny entries
    /// only make the ZIP directory expensive to read.
    DOCUMENT_ZIP_ENTRIES = "document.zip_entries", 10_000, Items, "files in one DOCX archive";
    /// Word's deepest (tables in tables) are a few dozen levels; more is a crafted file.
    DOCUMENT_XML_DEPTH = "document.xml_depth", 1_000, Levels, "nesting of elements in a DOCX's XML";

    // Model files (crates/engine).
    /// The deepest models made have under 200 layers.
    MODEL_LAYERS = "model.layers", 4_096, Items, "layers a model's config may claim (num_hidden_layers)";

    // Chat templates (crates/engine): a model's template is a stranger's program.
    /// minijinja's fuel: about one unit per instruction and per 64 bytes made, so it bounds time
    /// and memory; the hungriest real template (Gemma 4's) takes ~250,000 for a 200-message chat
    /// with tools.
    TEMPLATE_STEPS = "template.steps", 2_000_000, Steps, "work one render of a chat template may do (minijinja fuel)";
    /// minijinja's own default; real templates nest a few dozen deep.
    TEMPLATE_DEPTH = "template.depth", 500, Levels, "nesting of blocks, loops and macro calls in one render";
    /// Far more than any context window holds (some 16 million tokens).
    TEMPLATE_OUTPUT_BYTES = "template.output_bytes", 64 << 20, Bytes, "one rendered prompt";

    // The API server (crates/server).
    /// Large enough for a few base64 images or a long agent history.
    SERVER_BODY_BYTES = "server.body_bytes", 25 << 20, Bytes, "one HTTP request body (confab serve --body-limit-mb)";
    SERVER_EMBEDDING_INPUTS = "server.embedding_inputs", 2048, Items, "texts in one embeddings request";
    /// serde_json's own recursion limit, which every API body is parsed under: deeper JSON is
    /// refused before any of our code walks it.
    JSON_DEPTH = "json.depth", 128, Levels, "nesting of arrays and objects in a JSON body or file";

    // A chat turn (crates/turn) and its tools (crates/mcp).
    TURN_TOOLS = "turn.tools", 128, Items, "tool definitions in one request";
    /// What a tool's text output is cut to before it goes into the prompt (the cut is marked).
    TOOL_RESULT_BYTES = "tool.result_bytes", 100_000, Bytes, "one tool result's text, before it enters the prompt";
    MCP_MESSAGE_BYTES = "mcp.message_bytes", 64 << 20, Bytes, "one message from an MCP server";
}

/// The table docs/limits.md shows (its test keeps the file equal to this).
pub fn markdown_table() -> String {
    let mut table = String::from("| Limit | Value | Bounds |\n|---|---:|---|\n");
    for limit in ALL {
        table.push_str(&format!("| `{}` | {} {} | {} |\n", limit.name, grouped(limit.value), limit.unit.word(), limit.what));
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_dotted() {
        let mut names: Vec<_> = ALL.iter().map(|l| l.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ALL.len(), "two limits share a name");
        for limit in ALL {
            assert!(
                limit.name.split('.').count() == 2 && limit.name.chars().all(|c| c.is_ascii_lowercase() || c == '.' || c == '_'),
                "{}",
                limit.name
            );
            assert!(limit.value > 0, "{}", limit.name);
        }
    }

    #[test]
    fn a_limit_names_itself_with_its_value() {
        assert_eq!(MEDIA_IMAGE_PIXELS.to_string(), "media.image_pixels (40,000,000 pixels)");
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
    }

    /// docs/limits.md is the list people read: its table is this module's, exactly
    /// (`UPDATE_LIMITS_DOC=1 cargo test -p confab-limits` writes it).
    #[test]
    fn the_docs_list_every_limit() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/limits.md");
        let docs = std::fs::read_to_string(path).expect("docs/limits.md");
        let (start, end) = ("<!-- limits table: begin -->\n", "<!-- limits table: end -->");
        let (Some(a), Some(b)) = (docs.find(start), docs.find(end)) else { panic!("docs/limits.md lacks the table's markers") };
        let table = markdown_table();
        if docs[a + start.len()..b] != table {
            if std::env::var_os("UPDATE_LIMITS_DOC").is_some() {
                std::fs::write(path, format!("{}{table}{}", &docs[..a + start.len()], &docs[b..])).unwrap();
            } else {
                panic!("docs/limits.md's table is out of date: run UPDATE_LIMITS_DOC=1 cargo test -p confab-limits");
            }
        }
    }
}
