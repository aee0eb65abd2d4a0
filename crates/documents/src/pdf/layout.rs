//! Placed glyphs into text: a glyph that continues the previous one's baseline joins its line,
//! with a space where the gap between them is a word gap (a fraction of the font size); one that
//! leaves the line (across the baseline, backwards, or in another direction) starts a new line.

/// A glyph where it was drawn, in page space.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Char {
    /// What it stands for; `None` when its font does not say.
    pub text: Option<String>,
    /// Its origin on the baseline, and where the next glyph would go.
    pub start: [f32; 2],
    pub end: [f32; 2],
    /// The baseline's direction (the text space x axis in page space; any length).
    pub direction: [f32; 2],
    /// The font size on the page.
    pub size: f32,
}

/// A gap along the baseline wider than this many ems is a word gap (a space is a quarter em in
/// most fonts; kerning and letter spacing stay well under a tenth).
const WORD_GAP: f32 = 0.12;
/// A move across the baseline by more than this many ems is a new line (superscripts and
/// subscripts stay within it).
const LINE_GAP: f32 = 0.5;

/// A move across the baseline by more than this many ems, with a change of size, is a superscript
/// or subscript starting or ending.
const SCRIPT_SHIFT: f32 = 0.2;

/// A page's text as its glyphs arrive.
#[derive(Default)]
pub(super) struct PageText {
    text: String,
    last: Option<Last>,
    /// Glyphs shown, and those whose text is unknown.
    pub glyphs: usize,
    pub unknown: usize,
}

struct Last {
    end: [f32; 2],
    direction: [f32; 2],
    size: f32,
}

fn unit(v: [f32; 2]) -> Option<[f32; 2]> {
    let length = v[0].hypot(v[1]);
    (length > 1e-6 && length.is_finite()).then(|| [v[0] / length, v[1] / length])
}

impl PageText {
    pub fn push(&mut self, c: Char) {
        self.glyphs += 1;
        let direction = unit(c.direction).unwrap_or([1.0, 0.0]);
        if let Some(last) = &self.last {
            let size = c.size.max(last.size).max(0.1);
            let offset = [c.start[0] - last.end[0], c.start[1] - last.end[1]];
            let along = offset[0] * direction[0] + offset[1] * direction[1];
            let across = offset[1] * direction[0] - offset[0] * direction[1];
            let turned = direction[0] * last.direction[0] + direction[1] * last.direction[1] < 0.95;
            if turned || across.abs() > LINE_GAP * size || along < -size {
                self.end_line();
            } else if along > WORD_GAP * size || (across.abs() > SCRIPT_SHIFT * size && (c.size - last.size).abs() > 0.1 * size) {
                // A word gap, or a footnote marker's edge: a smaller glyph off the baseline
                // ("1The survey" reads "1 The survey").
                self.space();
            }
        }
        self.last = Some(Last { end: c.end, direction, size: c.size });
        match c.text {
            None => self.unknown += 1,
            Some(text) if text.chars().all(char::is_whitespace) => {
                if !text.is_empty() {
                    self.space();
                }
            }
            Some(text) => self.text.push_str(&text),
        }
    }

    fn space(&mut self) {
        if !self.text.is_empty() && !self.text.ends_with(char::is_whitespace) {
            self.text.push(' ');
        }
    }

    fn end_line(&mut self) {
        let trimmed = self.text.trim_end_matches([' ', '\t']).len();
        self.text.truncate(trimmed);
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push('\n');
        }
    }

    /// The page's text, trailing space trimmed.
    pub fn finish(&mut self) -> String {
        self.end_line();
        std::mem::take(&mut self.text).trim_end().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Glyphs of `text` set left to right from `x` on baseline `y`, `width` apart, size 10.
    fn run(page: &mut PageText, text: &str, x: f32, y: f32, width: f32) {
        for (i, c) in text.chars().enumerate() {
            let x0 = x + i as f32 * width;
            page.push(Char { text: Some(c.to_string()), start: [x0, y], end: [x0 + width, y], direction: [1.0, 0.0], size: 10.0 });
        }
    }

    #[test]
    fn gaps_make_words_and_moves_make_lines() {
        let mut page = PageText::default();
        // Letters placed one by one, touching: one word, however they were drawn.
        run(&mut page, "Efficient", 0.0, 700.0, 5.0);
        // A gap of 2.5 (a quarter em): a word break.
        run(&mut page, "office", 47.5, 700.0, 5.0);
        // A kerning gap of 0.5: no break.
        run(&mut page, "s", 78.0, 700.0, 5.0);
        // The next line, back at the margin.
        run(&mut page, "workflows", 0.0, 686.0, 5.0);
        assert_eq!(page.finish(), "Efficient offices\nworkflows");
        assert_eq!((page.glyphs, page.unknown), (25, 0));
    }

    #[test]
    fn rotated_text_and_superscripts() {
        let mut page = PageText::default();
        // Upwards (rotated 90 degrees): each glyph above the last.
        for (i, c) in "up".chars().enumerate() {
            let y = 100.0 + i as f32 * 5.0;
            page.push(Char { text: Some(c.into()), start: [50.0, y], end: [50.0, y + 5.0], direction: [0.0, 2.0], size: 10.0 });
        }
        // A superscript raised by 3 (under half the size): same line.
        page.push(Char { text: Some("1".into()), start: [50.0, 110.0], end: [50.0, 114.0], direction: [0.0, 1.0], size: 10.0 });
        assert_eq!(page.finish(), "up1");
    }

    #[test]
    fn a_footnote_marker_is_a_word_of_its_own() {
        let mut page = PageText::default();
        page.push(Char { text: Some("1".into()), start: [0.0, 104.0], end: [4.0, 104.0], direction: [1.0, 0.0], size: 7.0 });
        run(&mut page, "The", 4.0, 100.0, 5.0);
        assert_eq!(page.finish(), "1 The");
    }

    #[test]
    fn unknown_glyphs_are_counted_not_written() {
        let mut page = PageText::default();
        page.push(Char { text: None, start: [0.0, 0.0], end: [5.0, 0.0], direction: [1.0, 0.0], size: 10.0 });
        run(&mut page, "ok", 5.0, 0.0, 5.0);
        assert_eq!(page.finish(), "ok");
        assert_eq!((page.glyphs, page.unknown), (3, 1));
    }
}
