//! A document cut into passages for search: by headings and paragraphs, each passage near a
//! token-ish size target, consecutive passages under the same heading overlapping a little so an
//! answer that straddles a cut is whole in one of them.
//!
//! The rules, in one place:
//! - A passage never crosses a section (a PDF page), so its page is exact; its text is a
//!   contiguous slice of that section's text (`span`, byte offsets), so it can be found again.
//! - Blocks are paragraphs (text between blank lines) and Markdown heading lines. A heading
//!   starts a new passage once the current one holds a quarter of the target, and never ends
//!   one: headings at a passage's end move to the next passage. Headings left at the end of a
//!   page stay in the heading path of what follows (the path is carried across pages); only a
//!   document that is all headings gets a passage of headings alone.
//! - A block bigger than the target is cut at a line end, else a sentence end, else a space;
//!   source code is never cut inside a line when a line end is near. A table (a Markdown table,
//!   or a CSV file read as text) is cut between rows, and each later piece repeats its header.
//! - Overlap: a passage that follows a cut for size begins up to `overlap_tokens` before the
//!   previous one ended (at a line start or a word start). After a heading there is no overlap:
//!   that is a new topic.
//! - Deterministic: the same document and settings give the same passages.
//!
//! Sizes are estimated, not tokenized (a tokenizer is the engine's): four characters a token,
//! close for English prose in the BPE tokenizers our models use, generous for code.

use crate::{Document, DocumentFormat};

/// Bump when the rules above change, so indexes made with the old ones are made again.
pub const CHUNKING_VERSION: u32 = 1;

/// Characters per estimated token.
const CHARS_PER_TOKEN: usize = 4;

/// How passages are sized.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChunkSettings {
    /// The size a passage aims for, in estimated tokens (it may be smaller, at a heading or
    /// the end of a page; it is larger only by the repeated header of a table).
    pub target_tokens: usize,
    /// How much of the previous passage a passage repeats after a cut for size, in estimated
    /// tokens; at most half the target.
    pub overlap_tokens: usize,
}

impl Default for ChunkSettings {
    fn default() -> Self {
        ChunkSettings { target_tokens: 256, overlap_tokens: 32 }
    }
}

impl ChunkSettings {
    /// Names these settings and the rules' version, for an index's key: passages made with
    /// other settings are other passages.
    pub fn key(&self) -> String {
        let (target, overlap) = self.sizes();
        format!("chunk-v{CHUNKING_VERSION}-t{target}-o{overlap}")
    }

    /// The settings as used: a target of at least 16 tokens, an overlap of at most half of it.
    fn sizes(&self) -> (usize, usize) {
        let target = self.target_tokens.max(16);
        (target, self.overlap_tokens.min(target / 2))
    }
}

/// One passage of a document.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Passage {
    /// The document's name.
    pub document: String,
    /// 0, 1, … in reading order.
    pub ordinal: u32,
    /// The 1-based page, for formats that have pages.
    pub page: Option<u32>,
    /// Which of the document's sections (`Document::sections`) the passage is in.
    pub section: usize,
    /// Where the passage is in that section's text: byte offsets, on character boundaries.
    pub span: std::ops::Range<usize>,
    /// The headings it is under, outermost first (without the `#` marks).
    pub headings: Vec<String>,
    /// The text: the section's text at `span`, after a table's header row when the passage
    /// continues a table cut above it.
    pub text: String,
}

/// The estimated size of `text` in tokens (the unit of `ChunkSettings`).
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(CHARS_PER_TOKEN)
}

/// The document's passages, in reading order.
pub fn chunk_document(document: &Document, settings: &ChunkSettings) -> Vec<Passage> {
    let (target, overlap) = settings.sizes();
    let kind = Kind::of(&document.format);
    let mut chunker = Chunker { target, overlap, headings: Vec::new(), passages: Vec::new(), document };
    for (index, section) in document.sections.iter().enumerate() {
        chunker.section(index, &section.text, kind);
    }
    if chunker.passages.is_empty() {
        chunker.headings_only();
    }
    chunker.passages
}

/// How a format's lines are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Markdown headings and fences, tables.
    Prose,
    /// No headings (a `#` line is a comment or a preprocessor line); cut at line ends.
    Code,
    /// A CSV file: a Markdown table, or the raw text with its header on the first line.
    Csv,
}

impl Kind {
    fn of(format: &DocumentFormat) -> Kind {
        match format {
            DocumentFormat::Code { .. } => Kind::Code,
            DocumentFormat::Csv { .. } => Kind::Csv,
            _ => Kind::Prose,
        }
    }
}

/// A paragraph or a heading line of a section.
#[derive(Debug)]
struct Block {
    start: usize,
    end: usize,
    /// For a heading: its level (1 for `#`) and its title.
    heading: Option<(usize, String)>,
    /// For a table: its header (the lines each later piece repeats).
    table_header: Option<std::ops::Range<usize>>,
}

/// A piece of a block no bigger than the target.
#[derive(Debug, Clone)]
struct Piece {
    start: usize,
    end: usize,
    /// The header to repeat when a passage begins with this piece (a table's later pieces).
    header: Option<std::ops::Range<usize>>,
}

/// The passage being filled.
#[derive(Debug)]
struct Open {
    start: usize,
    /// The end of its last paragraph (its trailing headings excluded).
    content_end: Option<usize>,
    /// The start of the headings at its end, if it ends with headings.
    trailing_headings: Option<usize>,
    end: usize,
    tokens: usize,
    headings: Vec<String>,
    header: Option<std::ops::Range<usize>>,
}

struct Chunker<'a> {
    target: usize,
    overlap: usize,
    /// The heading path where reading has got to (it carries across sections).
    headings: Vec<String>,
    passages: Vec<Passage>,
    document: &'a Document,
}

impl Chunker<'_> {
    fn section(&mut self, index: usize, text: &str, kind: Kind) {
        let blocks = blocks(text, kind);
        let mut open: Option<Open> = None;
        for block in blocks {
            if let Some((level, title)) = &block.heading {
                if open.as_ref().is_some_and(|o| o.content_end.is_some() && o.tokens * 4 >= self.target) {
                    let done = open.take().expect("checked");
                    self.emit(index, text, &done, done.content_end.expect("checked"));
                }
                self.headings.truncate(level - 1);
                self.headings.push(title.clone());
                let tokens = estimate_tokens(&text[block.start..block.end]);
                match &mut open {
                    Some(o) => {
                        o.trailing_headings.get_or_insert(block.start);
                        o.end = block.end;
                        o.tokens += tokens;
                    }
                    None => {
                        open = Some(Open {
                            start: block.start,
                            content_end: None,
                            trailing_headings: Some(block.start),
                            end: block.end,
                            tokens,
                            headings: Vec::new(),
                            header: None,
                        })
                    }
                }
                continue;
            }
            for piece in self.pieces(text, &block, kind) {
                let tokens = estimate_tokens(&text[piece.start..piece.end]);
                let full = open.as_ref().is_some_and(|o| o.content_end.is_some() && o.tokens + tokens > self.target);
                if full {
                    let done = open.take().expect("checked");
                    let content_end = done.content_end.expect("checked");
                    self.emit(index, text, &done, content_end);
                    open = Some(match done.trailing_headings {
                        // Its closing headings open the next passage.
                        Some(start) => Open {
                            start,
                            content_end: None,
                            trailing_headings: Some(start),
                            end: done.end,
                            tokens: estimate_tokens(&text[start..done.end]),
                            headings: Vec::new(),
                            header: None,
                        },
                        None => {
                            let start = match self.overlap_start(text, done.start, content_end, kind) {
                                // No overlap: the next passage starts at its own text.
                                start if start >= content_end => piece.start,
                                start => start,
                            };
                            Open {
                                start,
                                content_end: None,
                                trailing_headings: None,
                                end: start,
                                tokens: text.get(start..content_end).map_or(0, estimate_tokens),
                                headings: self.headings.clone(),
                                // The overlap reaches back into the same table: same header.
                                header: piece.header.clone(),
                            }
                        }
                    });
                }
                let o = open.get_or_insert_with(|| Open {
                    start: piece.start,
                    content_end: None,
                    trailing_headings: None,
                    end: piece.start,
                    tokens: 0,
                    headings: Vec::new(),
                    header: piece.header.clone(),
                });
                if o.content_end.is_none() {
                    o.headings = self.headings.clone();
                }
                o.content_end = Some(piece.end);
                o.trailing_headings = None;
                o.end = piece.end;
                o.tokens += tokens;
            }
        }
        if let Some(done) = open {
            // Headings closing a page are not a passage: they stay in the path of what follows.
            if let Some(end) = done.content_end {
                self.emit(index, text, &done, end);
            }
        }
    }

    /// The last section's headings as one passage, for a document that has nothing else.
    fn headings_only(&mut self) {
        let Some((index, section)) = self.document.sections.iter().enumerate().rev().find(|(_, s)| !s.text.trim().is_empty()) else {
            return;
        };
        let span = 0..section.text.trim_end().len();
        self.passages.push(Passage {
            document: self.document.name.clone(),
            ordinal: 0,
            page: section.page,
            section: index,
            text: section.text[span.clone()].to_string(),
            span,
            headings: self.headings.clone(),
        });
    }

    fn emit(&mut self, index: usize, text: &str, open: &Open, end: usize) {
        let span = open.start..end;
        let body = &text[span.clone()];
        let text = match &open.header {
            // A continued table: its header first, unless the passage begins with it anyway.
            Some(header) if header.start < span.start => format!("{}\n{body}", &text[header.clone()]),
            _ => body.to_string(),
        };
        self.passages.push(Passage {
            document: self.document.name.clone(),
            ordinal: self.passages.len() as u32,
            page: self.document.sections[index].page,
            section: index,
            span,
            headings: open.headings.clone(),
            text,
        });
    }

    /// Where a passage that overlaps the one at `start..end` begins: about `overlap` tokens
    /// before `end`, moved forward to a line start (code, tables) or a word start.
    fn overlap_start(&self, text: &str, start: usize, end: usize, kind: Kind) -> usize {
        if self.overlap == 0 {
            return end;
        }
        let back = self.overlap * CHARS_PER_TOKEN;
        let from = text[start..end].char_indices().rev().nth(back.saturating_sub(1)).map_or(start, |(i, _)| start + i);
        if from <= start {
            // The whole previous passage is within the overlap.
            return start;
        }
        let window = &text[from..end];
        let line = window.find('\n').map(|i| from + i + 1);
        let word = window.find(char::is_whitespace).map(|i| from + i);
        let by_lines = kind != Kind::Prose || text[start..end].contains("\n|");
        let cut = if by_lines { line } else { word.or(line) };
        // Past the whitespace the cut landed on; no overlap where there is no line or word start.
        cut.and_then(|cut| content_start(text, cut, end)).unwrap_or(end)
    }

    /// The block cut into pieces of at most the target (a table's later pieces repeat its header).
    fn pieces(&self, text: &str, block: &Block, kind: Kind) -> Vec<Piece> {
        let limit = self.target * CHARS_PER_TOKEN;
        let mut pieces = Vec::new();
        let mut start = block.start;
        loop {
            let rest = &text[start..block.end];
            let header = block.table_header.clone().filter(|h| h.start < start);
            if rest.chars().count() <= limit {
                pieces.push(Piece { start, end: block.end, header });
                return pieces;
            }
            let cut = start + cut_point(rest, limit, kind);
            let end = start + text[start..cut].trim_end().len();
            pieces.push(Piece { start, end: end.max(start + 1).min(cut), header });
            start = content_start(text, cut, block.end).unwrap_or(block.end);
            if start >= block.end {
                return pieces;
            }
        }
    }
}

/// The first character at or after `from` (before `end`) that is not whitespace, or the start
/// of its line when only indentation comes before it there.
fn content_start(text: &str, from: usize, end: usize) -> Option<usize> {
    let first = from + text[from..end].find(|c: char| !c.is_whitespace())?;
    let line_start = text[..first].rfind('\n').map_or(0, |i| i + 1);
    Some(if line_start >= from { line_start } else { first })
}

/// Where to cut `text` so the first part holds at most `limit` characters: a line end in the
/// second half of it, else (prose) a sentence end, else a space, else at the limit.
fn cut_point(text: &str, limit: usize, kind: Kind) -> usize {
    let limit_byte = text.char_indices().nth(limit).map_or(text.len(), |(i, _)| i);
    let half = text.char_indices().nth(limit / 2).map_or(0, |(i, _)| i);
    let head = &text[..limit_byte];
    if let Some(i) = head.rfind('\n').filter(|&i| i >= half) {
        return i + 1;
    }
    if kind == Kind::Prose {
        if let Some(i) = head.rfind(". ").filter(|&i| i >= half) {
            return i + 2;
        }
    }
    if let Some(i) = head.rfind(char::is_whitespace).filter(|&i| i > 0) {
        return i + head[i..].chars().next().map_or(1, char::len_utf8);
    }
    limit_byte.max(text.chars().next().map_or(0, char::len_utf8))
}

/// A section's paragraphs and heading lines, with their byte ranges (trailing spaces left out).
fn blocks(text: &str, kind: Kind) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, usize)> = None;
    let mut fence: Option<&str> = None;
    let mut offset = 0;
    let close = |blocks: &mut Vec<Block>, current: &mut Option<(usize, usize)>| {
        if let Some((start, end)) = current.take() {
            blocks.push(Block { start, end, heading: None, table_header: table_header(text, start, end, kind, blocks.is_empty()) });
        }
    };
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let content = line.trim_end();
        let end = start + content.len();
        let trimmed = content.trim_start();
        if kind == Kind::Prose {
            if let Some(marker) = fence {
                if trimmed.starts_with(marker) {
                    fence = None;
                }
                current = Some((current.map_or(start, |(s, _)| s), end));
                continue;
            }
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                fence = Some(&trimmed[..3]);
                current = Some((current.map_or(start, |(s, _)| s), end));
                continue;
            }
            if let Some(heading) = heading(trimmed) {
                close(&mut blocks, &mut current);
                blocks.push(Block { start: start + (content.len() - trimmed.len()), end, heading: Some(heading), table_header: None });
                continue;
            }
        }
        if trimmed.is_empty() {
            close(&mut blocks, &mut current);
            continue;
        }
        // Code keeps its indentation.
        let begin = if kind == Kind::Code { start } else { start + (content.len() - trimmed.len()) };
        current = Some((current.map_or(begin, |(s, _)| s), end));
    }
    close(&mut blocks, &mut current);
    blocks
}

/// A Markdown ATX heading: its level and title.
fn heading(line: &str) -> Option<(usize, String)> {
    let level = line.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &line[level..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    let title = rest.trim().trim_end_matches('#').trim();
    (!title.is_empty()).then(|| (level, title.to_string()))
}

/// The header of a table block: a Markdown table's first two lines (titles and the `---` row),
/// or a CSV file's first line when it is read as text.
fn table_header(text: &str, start: usize, end: usize, kind: Kind, first: bool) -> Option<std::ops::Range<usize>> {
    let block = &text[start..end];
    let mut lines = block.split_inclusive('\n');
    let first_line = lines.next()?;
    if first_line.trim_start().starts_with('|') {
        let second = lines.next()?;
        let separator = second.trim();
        let is_separator = separator.starts_with('|') && separator.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '));
        return is_separator.then(|| start..start + first_line.len() + second.trim_end().len());
    }
    (kind == Kind::Csv && first).then(|| start..start + first_line.trim_end().len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Section;

    fn document(name: &str, format: DocumentFormat, sections: &[(Option<u32>, &str)]) -> Document {
        Document {
            name: name.into(),
            format,
            sections: sections.iter().map(|(page, text)| Section { page: *page, text: text.to_string() }).collect(),
            notes: vec![],
            scanned_pages: vec![],
        }
    }

    fn settings(target: usize, overlap: usize) -> ChunkSettings {
        ChunkSettings { target_tokens: target, overlap_tokens: overlap }
    }

    #[test]
    fn headings_make_the_path_and_never_end_a_passage() {
        let text = "# Guide\n\n## Install\n\nRun the installer and wait.\n\n## Use\n\nOpen the app.\n\n### Keys\n\nPress the keys.";
        let doc = document("guide.md", DocumentFormat::Markdown, &[(None, text)]);
        // A target so small that every paragraph fills a passage.
        let passages = chunk_document(&doc, &settings(16, 0));
        let texts: Vec<&str> = passages.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(
            texts,
            ["# Guide\n\n## Install\n\nRun the installer and wait.", "## Use\n\nOpen the app.", "### Keys\n\nPress the keys."]
        );
        assert_eq!(passages[0].headings, ["Guide", "Install"]);
        assert_eq!(passages[1].headings, ["Guide", "Use"]);
        assert_eq!(passages[2].headings, ["Guide", "Use", "Keys"]);
        for passage in &passages {
            assert_eq!(&text[passage.span.clone()], passage.text);
            assert!(!passage.text.lines().last().unwrap().starts_with('#'), "{passage:?}");
        }
        assert_eq!(passages.iter().map(|p| p.ordinal).collect::<Vec<_>>(), [0, 1, 2]);
    }

    #[test]
    fn small_sections_share_a_passage_and_a_heading_moves_on_when_it_would_end_one() {
        let text = "# A\n\nshort.\n\n# B\n\nalso short.\n\n# C\n\n".to_string() + &"word ".repeat(70);
        let doc = document("a.md", DocumentFormat::Markdown, &[(None, &text)]);
        let passages = chunk_document(&doc, &settings(64, 8));
        assert_eq!(passages.len(), 3, "{passages:#?}");
        assert_eq!(passages[0].text, "# A\n\nshort.\n\n# B\n\nalso short.");
        assert!(passages[1].text.starts_with("# C\n\nword"), "{passages:#?}");
        assert_eq!(passages[1].headings, ["C"]);
    }

    #[test]
    fn long_paragraphs_overlap_as_configured() {
        let sentences: Vec<String> = (0..40).map(|i| format!("Sentence number {i} says a few words.")).collect();
        let text = sentences.join(" ");
        let doc = document("long.txt", DocumentFormat::Text, &[(None, &text)]);
        let passages = chunk_document(&doc, &settings(64, 16));
        assert!(passages.len() >= 4, "{passages:#?}");
        for pair in passages.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            assert!(b.span.start < a.span.end, "passages overlap: {a:?} {b:?}");
            let shared = estimate_tokens(&text[b.span.start..a.span.end]);
            assert!((8..=16).contains(&shared), "about 16 tokens shared, got {shared}");
            assert!(text[..b.span.start].ends_with(' '), "starts at a word: {:?}", b.text);
        }
        for passage in &passages {
            assert!(estimate_tokens(&passage.text) <= 64 + 16, "{}", passage.text);
        }
        assert_eq!(passages.last().unwrap().span.end, text.len(), "the end is covered");
        assert_eq!(passages[0].span.start, 0);
        // No overlap when asked for none: the passages tile the text.
        let tiled = chunk_document(&doc, &settings(64, 0));
        for pair in tiled.windows(2) {
            assert!(pair[1].span.start >= pair[0].span.end);
        }
    }

    #[test]
    fn pages_are_kept_and_passages_never_cross_them() {
        let doc = document(
            "r.pdf",
            DocumentFormat::Pdf,
            &[(Some(1), "# Report\n\nPage one text."), (Some(2), ""), (Some(3), "Page three text.")],
        );
        let passages = chunk_document(&doc, &ChunkSettings::default());
        assert_eq!(passages.len(), 2);
        assert_eq!((passages[0].page, passages[0].section), (Some(1), 0));
        assert_eq!((passages[1].page, passages[1].section), (Some(3), 2));
        assert_eq!(passages[1].headings, ["Report"], "the heading path carries across pages");
    }

    #[test]
    fn code_is_cut_at_line_ends_and_hash_lines_are_not_headings() {
        let mut code = String::from("#include <stdio.h>\n\n");
        for i in 0..30 {
            code.push_str(&format!("int function_{i}(int x) {{\n    return x * {i} + 1;\n}}\n"));
        }
        let doc = document("main.c", DocumentFormat::Code { language: "C".into() }, &[(None, &code)]);
        let passages = chunk_document(&doc, &settings(48, 8));
        assert!(passages.len() > 2);
        for passage in &passages {
            assert!(passage.headings.is_empty());
            let start = passage.span.start;
            assert!(start == 0 || code[..start].ends_with('\n'), "starts at a line: {:?}", passage.text);
            assert!(code[passage.span.end..].starts_with('\n'), "ends at a line: {:?}", passage.text);
        }
        assert!(passages[0].text.starts_with("#include"));
    }

    #[test]
    fn tables_are_cut_between_rows_and_repeat_their_header() {
        let mut table = String::from("| name | value |\n| --- | --- |\n");
        for i in 0..60 {
            table.push_str(&format!("| row {i} | {} |\n", i * 7));
        }
        let doc = document("data.csv", DocumentFormat::Csv { delimiter: b',' }, &[(None, table.trim_end())]);
        let passages = chunk_document(&doc, &settings(64, 8));
        assert!(passages.len() > 3, "{passages:#?}");
        for passage in &passages {
            assert!(passage.text.starts_with("| name | value |\n| --- | --- |\n"), "{:?}", passage.text);
            assert!(passage.text.ends_with(" |"), "whole rows: {:?}", passage.text);
        }
        // Raw CSV (too big for a table) repeats its first line.
        let raw: String = std::iter::once("id,city\n".to_string()).chain((0..200).map(|i| format!("{i},Town {i}\n"))).collect();
        let doc = document("big.csv", DocumentFormat::Csv { delimiter: b',' }, &[(None, raw.trim_end())]);
        let passages = chunk_document(&doc, &settings(64, 0));
        assert!(passages.len() > 3);
        assert!(passages.iter().all(|p| p.text.starts_with("id,city\n")), "{passages:#?}");
    }

    #[test]
    fn chunking_is_deterministic_and_keyed_by_its_settings() {
        let text = "# T\n\n".to_string() + &"Alpha beta gamma delta. ".repeat(200);
        let doc = document("t.md", DocumentFormat::Markdown, &[(None, &text)]);
        assert_eq!(chunk_document(&doc, &ChunkSettings::default()), chunk_document(&doc, &ChunkSettings::default()));
        assert_eq!(ChunkSettings::default().key(), "chunk-v1-t256-o32");
        assert_ne!(settings(128, 16).key(), ChunkSettings::default().key());
        assert_eq!(settings(4, 100).key(), "chunk-v1-t16-o8", "sizes are clamped as used");
    }

    #[test]
    fn odd_input_gives_passages_not_panics() {
        for text in [
            "",
            "   \n\n  ",
            "#",
            "# only a heading",
            "ééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé",
            "```\n# not a heading\n```",
        ] {
            let doc = document("x.md", DocumentFormat::Markdown, &[(None, text)]);
            for passage in chunk_document(&doc, &settings(4, 2)) {
                assert!(doc.sections[passage.section].text.get(passage.span.clone()).is_some());
            }
        }
        let fenced = document("x.md", DocumentFormat::Markdown, &[(None, "```\n# not a heading\n```")]);
        assert!(chunk_document(&fenced, &ChunkSettings::default())[0].headings.is_empty());
        let heading = document("x.md", DocumentFormat::Markdown, &[(None, "# only a heading")]);
        assert_eq!(chunk_document(&heading, &ChunkSettings::default())[0].text, "# only a heading");
    }
}
