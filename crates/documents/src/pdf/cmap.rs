//! A font's ToUnicode CMap, read tolerantly: each `bfchar` and `bfrange` entry on its own, so an
//! entry that is malformed (a destination that is no UTF-16, such as MuPDF's `<10300>`, a range
//! that runs backwards) is skipped and the rest of the map is kept, as pdfminer does. Ranges map
//! to consecutive characters or to an array of destinations.

use std::collections::HashMap;

/// Codes (with their length in bytes, as the map writes them) to the text they stand for.
#[derive(Debug, Default)]
pub(super) struct ToUnicode {
    map: HashMap<(u8, u32), String>,
    /// Entries left out because they could not be read.
    pub skipped: usize,
}

/// The most codes a map may hold (ranges expanded): a two-byte font's whole code space, twice.
const MAX_CODES: usize = 1 << 17;

impl ToUnicode {
    pub fn parse(data: &[u8]) -> ToUnicode {
        let tokens = tokenize(data);
        let mut cmap = ToUnicode::default();
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i] {
                Token::Word(w) if w == b"beginbfchar" => i = cmap.bfchar(&tokens, i + 1),
                Token::Word(w) if w == b"beginbfrange" => i = cmap.bfrange(&tokens, i + 1),
                _ => i += 1,
            }
        }
        cmap
    }

    pub fn get(&self, length: u8, code: u32) -> Option<&str> {
        self.map.get(&(length, code)).map(String::as_str)
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    fn insert(&mut self, length: u8, code: u32, text: String) {
        if self.map.len() < MAX_CODES {
            self.map.insert((length, code), text);
        } else {
            self.skipped += 1;
        }
    }

    /// `<src> <dst>` pairs up to `endbfchar`; returns the index after it.
    fn bfchar(&mut self, tokens: &[Token], mut i: usize) -> usize {
        while i < tokens.len() {
            if tokens[i].is_word(b"endbfchar") {
                return i + 1;
            }
            match (&tokens[i], tokens.get(i + 1)) {
                (Token::Hex(src), Some(Token::Hex(dst))) => {
                    match (code_of(src), utf16(dst)) {
                        (Some((length, code)), Some(text)) => self.insert(length, code, text),
                        _ => self.skipped += 1,
                    }
                    i += 2;
                }
                _ => {
                    // A destination given as a glyph name, or a stray token: skip one and go on.
                    self.skipped += 1;
                    i += 1;
                }
            }
        }
        i
    }

    /// `<lo> <hi> <dst>` or `<lo> <hi> [<dst> ...]` up to `endbfrange`.
    fn bfrange(&mut self, tokens: &[Token], mut i: usize) -> usize {
        while i < tokens.len() {
            if tokens[i].is_word(b"endbfrange") {
                return i + 1;
            }
            let (Token::Hex(lo), Some(Token::Hex(hi))) = (&tokens[i], tokens.get(i + 1)) else {
                self.skipped += 1;
                i += 1;
                continue;
            };
            let range = match (code_of(lo), code_of(hi)) {
                (Some((length, lo)), Some((hi_length, hi))) if length == hi_length && lo <= hi && hi - lo < MAX_CODES as u32 => {
                    Some((length, lo, hi))
                }
                _ => None,
            };
            match tokens.get(i + 2) {
                Some(Token::Hex(dst)) => {
                    match (range, utf16_units(dst)) {
                        (Some((length, lo, hi)), Some(units)) => {
                            for (offset, code) in (lo..=hi).enumerate() {
                                // Consecutive characters: the last code unit counts up.
                                let mut units = units.clone();
                                let last = units.len() - 1;
                                units[last] = units[last].wrapping_add(offset as u16);
                                match String::from_utf16(&units) {
                                    Ok(text) => self.insert(length, code, text),
                                    Err(_) => self.skipped += 1,
                                }
                            }
                        }
                        _ => self.skipped += 1,
                    }
                    i += 3;
                }
                Some(Token::Open) => {
                    let close = tokens[i + 3..].iter().position(|t| matches!(t, Token::Close)).map_or(tokens.len(), |p| i + 3 + p);
                    match range {
                        Some((length, lo, hi)) => {
                            for (code, dst) in (lo..=hi).zip(&tokens[i + 3..close]) {
                                match dst {
                                    Token::Hex(dst) => match utf16(dst) {
                                        Some(text) => self.insert(length, code, text),
                                        None => self.skipped += 1,
                                    },
                                    _ => self.skipped += 1,
                                }
                            }
                        }
                        None => self.skipped += 1,
                    }
                    i = close + 1;
                }
                _ => {
                    self.skipped += 1;
                    i += 2;
                }
            }
        }
        i
    }
}

/// A source code: 1 to 4 bytes, big-endian.
fn code_of(hex: &Hex) -> Option<(u8, u32)> {
    if hex.odd || hex.bytes.is_empty() || hex.bytes.len() > 4 {
        return None;
    }
    Some((hex.bytes.len() as u8, hex.bytes.iter().fold(0u32, |code, &b| code << 8 | u32::from(b))))
}

/// A destination's UTF-16 code units: an even, non-zero number of bytes.
fn utf16_units(hex: &Hex) -> Option<Vec<u16>> {
    if hex.odd || hex.bytes.is_empty() || !hex.bytes.len().is_multiple_of(2) {
        return None;
    }
    Some(hex.bytes.chunks(2).map(|pair| u16::from_be_bytes([pair[0], pair[1]])).collect())
}

/// A destination as text: valid UTF-16, NULs (a glyph that stands for nothing) dropped.
fn utf16(hex: &Hex) -> Option<String> {
    let text = String::from_utf16(&utf16_units(hex)?).ok()?;
    Some(text.replace('\0', ""))
}

#[derive(Debug, Clone, PartialEq)]
struct Hex {
    bytes: Vec<u8>,
    /// An odd number of digits (the spec pads a zero; as a code or a UTF-16 destination it is
    /// malformed).
    odd: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Hex(Hex),
    Open,
    Close,
    Word(Vec<u8>),
    Other,
}

impl Token {
    fn is_word(&self, word: &[u8]) -> bool {
        matches!(self, Token::Word(w) if w == word)
    }
}

fn tokenize(data: &[u8]) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut i = 0;
    let delimiter = |b: u8| b.is_ascii_whitespace() || b"()<>[]{}/%".contains(&b);
    while i < data.len() {
        let b = data[i];
        match b {
            b'%' => {
                while i < data.len() && data[i] != b'\n' && data[i] != b'\r' {
                    i += 1;
                }
            }
            b'<' if data.get(i + 1) == Some(&b'<') => {
                tokens.push(Token::Other);
                i += 2;
            }
            b'>' if data.get(i + 1) == Some(&b'>') => {
                tokens.push(Token::Other);
                i += 2;
            }
            b'<' => {
                let end = data[i + 1..].iter().position(|&c| c == b'>').map_or(data.len(), |p| i + 1 + p);
                let digits: Vec<u8> = data[i + 1..end].iter().filter(|c| !c.is_ascii_whitespace()).copied().collect();
                let token = if digits.iter().all(u8::is_ascii_hexdigit) {
                    let odd = !digits.len().is_multiple_of(2);
                    let bytes = digits
                        .chunks(2)
                        .map(|pair| {
                            let hi = hex_value(pair[0]);
                            let lo = pair.get(1).map_or(0, |&d| hex_value(d));
                            hi << 4 | lo
                        })
                        .collect();
                    Token::Hex(Hex { bytes, odd })
                } else {
                    Token::Other
                };
                tokens.push(token);
                i = end + 1;
            }
            b'(' => {
                // A literal string (rare in ToUnicode maps): skipped, with its nesting.
                let mut depth = 0usize;
                while i < data.len() {
                    match data[i] {
                        b'\\' => i += 1,
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                tokens.push(Token::Other);
                i += 1;
            }
            b'[' => {
                tokens.push(Token::Open);
                i += 1;
            }
            b']' => {
                tokens.push(Token::Close);
                i += 1;
            }
            _ if b.is_ascii_whitespace() => i += 1,
            _ => {
                let start = i;
                i += 1;
                while i < data.len() && !delimiter(data[i]) {
                    i += 1;
                }
                tokens.push(if b == b'/' { Token::Other } else { Token::Word(data[start..i].to_vec()) });
            }
        }
    }
    tokens
}

fn hex_value(digit: u8) -> u8 {
    (digit as char).to_digit(16).unwrap_or(0) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_chars_ranges_and_arrays() {
        let cmap = ToUnicode::parse(
            b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n\
              1 begincodespacerange <0000> <FFFF> endcodespacerange\n\
              2 beginbfchar <0003> <0020> <0024> <0041> endbfchar\n\
              2 beginbfrange <0044> <0046> <0061> <0050> <0051> [<00660069> <D835DC00>] endbfrange\n\
              endcmap",
        );
        assert_eq!(cmap.get(2, 3), Some(" "));
        assert_eq!(cmap.get(2, 0x24), Some("A"));
        assert_eq!(cmap.get(2, 0x46), Some("c"));
        assert_eq!(cmap.get(2, 0x50), Some("fi"));
        assert_eq!(cmap.get(2, 0x51), Some("\u{1D400}"));
        assert_eq!(cmap.get(1, 0x24), None);
        assert_eq!(cmap.skipped, 0);
    }

    /// MuPDF writes ranges like `<14fd> <14ff> <10300>` (five digits: no UTF-16); the entry is
    /// skipped, the map kept (it was dropped whole, and the text read as raw bytes).
    #[test]
    fn a_bad_entry_is_skipped_and_the_rest_kept() {
        let cmap = ToUnicode::parse(
            b"2 beginbfrange\n<0003> <0005> <0041>\n<14fd> <14ff> <10300>\n<0009> <0007> <0061>\n<000a> <000a> <0062>\nendbfrange\n\
              3 beginbfchar\n<0010> <zz>\n<0011> /space\n<0012> <0063>\nendbfchar",
        );
        assert_eq!(cmap.get(2, 4), Some("B"));
        assert_eq!(cmap.get(2, 0x14fd), None);
        assert_eq!(cmap.get(2, 0x0a), Some("b"));
        assert_eq!(cmap.get(2, 0x12), Some("c"));
        assert_eq!(cmap.get(2, 0x10), None);
        assert!(cmap.skipped >= 3, "{}", cmap.skipped);
    }

    #[test]
    fn one_byte_codes_and_nul_destinations() {
        let cmap = ToUnicode::parse(b"1 beginbfchar <20> <0020> <41> <0000> endbfchar");
        assert_eq!(cmap.get(2, 0x20), None);
        assert_eq!(cmap.get(1, 0x20), Some(" "));
        assert_eq!(cmap.get(1, 0x41), Some(""));
    }
}
