//! Placed glyphs into text: a glyph that continues the previous one's baseline joins its line,
//! with a space where the gap between them is a word gap (a fraction of the font size); one that
//! leaves the line (across the baseline, backwards, or in another direction) starts a new line.
//! The page's lines are then put in reading order by their boxes (`reading_order`).

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
/// A gap along the baseline wider than this many ems separates pieces of text (columns, cells)
/// rather than words.
const PIECE_GAP: f32 = 1.5;

/// A page's text as its glyphs arrive: lines, each what the stream draws along one baseline.
#[derive(Default)]
pub(super) struct PageText {
    lines: Vec<Line>,
    last: Option<Last>,
    /// Glyphs shown, and those whose text is unknown.
    pub glyphs: usize,
    pub unknown: usize,
}

/// A line of text and its box on the page (for a line along the page's x axis; others keep
/// their place in the stream).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Line {
    pub text: String,
    pub x0: f32,
    pub x1: f32,
    pub bottom: f32,
    pub top: f32,
    /// The font size of its first glyph.
    pub size: f32,
    /// Every glyph runs left to right along the page's x axis.
    pub horizontal: bool,
    /// It continues the line before it in the stream after a gap wider than a gutter.
    pub piece: bool,
    /// Its place in the stream.
    index: usize,
}

impl Line {
    fn new(c: &Char, direction: [f32; 2]) -> Line {
        Line {
            text: String::new(),
            x0: f32::INFINITY,
            x1: f32::NEG_INFINITY,
            bottom: f32::INFINITY,
            top: f32::NEG_INFINITY,
            size: c.size,
            horizontal: direction[0] > 0.99,
            piece: false,
            index: 0,
        }
    }

    fn extend(&mut self, c: &Char, direction: [f32; 2]) {
        self.horizontal &= direction[0] > 0.99;
        let size = c.size.max(0.0);
        // Descenders below the baseline, ascenders above it (a box a little inside the em, so
        // that lines set solid still leave a gap between them), "above" being across the
        // baseline's direction: a line turned 90 degrees has its box across the page's x axis.
        let up = [-direction[1], direction[0]];
        for point in [c.start, c.end] {
            for reach in [-0.1 * size, 0.7 * size] {
                let (x, y) = (point[0] + reach * up[0], point[1] + reach * up[1]);
                self.x0 = self.x0.min(x);
                self.x1 = self.x1.max(x);
                self.bottom = self.bottom.min(y);
                self.top = self.top.max(y);
            }
        }
    }
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
        let mut new_line = true;
        let mut piece = false;
        if let Some(last) = &self.last {
            let size = c.size.max(last.size).max(0.1);
            let offset = [c.start[0] - last.end[0], c.start[1] - last.end[1]];
            let along = offset[0] * direction[0] + offset[1] * direction[1];
            let across = offset[1] * direction[0] - offset[0] * direction[1];
            let turned = direction[0] * last.direction[0] + direction[1] * last.direction[1] < 0.95;
            new_line = turned || across.abs() > LINE_GAP * size || along < -size;
            // A gap wider than a gutter starts a piece of its own (a column drawn row by row
            // beside another, a table's cell), joined back on if the reading order keeps the
            // pieces together.
            piece = !new_line && along > PIECE_GAP * size;
            if !new_line
                && !piece
                && (along > WORD_GAP * size || (across.abs() > SCRIPT_SHIFT * size && (c.size - last.size).abs() > 0.1 * size))
            {
                // A word gap, or a footnote marker's edge: a smaller glyph off the baseline
                // ("1The survey" reads "1 The survey").
                self.space();
            }
        }
        if new_line || piece {
            self.end_line();
            let mut line = Line::new(&c, direction);
            line.piece = piece;
            line.index = self.lines.len();
            self.lines.push(line);
        }
        self.last = Some(Last { end: c.end, direction, size: c.size });
        let line = self.lines.last_mut().expect("a line was started");
        line.extend(&c, direction);
        match c.text {
            None => self.unknown += 1,
            Some(text) if text.chars().all(char::is_whitespace) => {
                if !text.is_empty() {
                    self.space();
                }
            }
            Some(text) => line.text.push_str(&text),
        }
    }

    fn space(&mut self) {
        if let Some(line) = self.lines.last_mut() {
            if !line.text.is_empty() && !line.text.ends_with(char::is_whitespace) {
                line.text.push(' ');
            }
        }
    }

    fn end_line(&mut self) {
        if let Some(line) = self.lines.last_mut() {
            let trimmed = line.text.trim_end().len();
            line.text.truncate(trimmed);
            if line.text.is_empty() {
                self.lines.pop();
            }
        }
    }

    /// The page's lines in reading order.
    pub fn finish(&mut self) -> Vec<Line> {
        self.end_line();
        reading_order(std::mem::take(&mut self.lines))
    }
}

/// Lines in reading order, found from their boxes by a recursive XY-cut: a wide gap across the
/// whole region first (a footer or header set off from the body), then a gutter down the whole
/// region (columns, left to right), then bands top to bottom, consecutive bands that share a
/// gutter kept together so that their columns are read one after the other rather than row by
/// row. Text in other directions (a sideways table caption, a label up an axis) takes its place by
/// its box, a column of its own beside what it runs along; a page mostly in other directions
/// (turned by its content rather than /Rotate) keeps the stream's order.
pub(super) fn reading_order(lines: Vec<Line>) -> Vec<Line> {
    let chars = |horizontal: bool| lines.iter().filter(|l| l.horizontal == horizontal).map(|l| l.text.chars().count()).sum::<usize>();
    if lines.len() < 2 || chars(false) >= chars(true) || lines.iter().any(|l| !l.x0.is_finite() || !l.top.is_finite()) {
        return lines;
    }
    let mut sizes: Vec<f32> = lines.iter().map(|l| l.size).collect();
    sizes.sort_by(f32::total_cmp);
    let em = sizes[sizes.len() / 2].max(1.0);
    let mut order = Vec::with_capacity(lines.len());
    xy_cut((0..lines.len()).collect(), &lines, em, &mut order);
    let mut lines: Vec<Option<Line>> = lines.into_iter().map(Some).collect();
    join_pieces(order.into_iter().filter_map(|i| lines[i].take()).collect())
}

/// A piece that follows, in reading order, the line it was split from joins it again (a table
/// row's cells read as one line).
fn join_pieces(lines: Vec<Line>) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::with_capacity(lines.len());
    for line in lines {
        match out.last_mut() {
            Some(last) if line.piece && line.index == last.index + 1 => {
                last.text.push(' ');
                last.text.push_str(&line.text);
                last.x1 = last.x1.max(line.x1);
                last.bottom = last.bottom.min(line.bottom);
                last.top = last.top.max(line.top);
                last.index = line.index;
            }
            _ => out.push(line),
        }
    }
    out
}

/// A gap across the region this many ems tall sets off what is above from what is below.
const SECTION_GAP: f32 = 1.5;
/// A gap down the region this many ems wide is a gutter between columns.
const GUTTER: f32 = 1.0;

fn xy_cut(region: Vec<usize>, lines: &[Line], em: f32, out: &mut Vec<usize>) {
    if region.len() < 2 {
        out.extend(region);
        return;
    }
    let bands = split_y(&region, lines, SECTION_GAP * em);
    if bands.len() > 1 {
        bands.into_iter().for_each(|band| xy_cut(band, lines, em, out));
        return;
    }
    let columns = split_x(&region, lines, GUTTER * em);
    if columns.len() > 1 && columns.iter().all(|column| wide(column, lines, em)) {
        columns.into_iter().for_each(|column| xy_cut(column, lines, em, out));
        return;
    }
    // Sideways text beside narrow columns (a caption up a table's side): read where it stands,
    // the columns between such text kept together (a table's, read row by row).
    let sideways = |column: &Vec<usize>| column.iter().all(|&i| !lines[i].horizontal);
    if columns.len() > 1 && columns.iter().any(sideways) {
        let mut parts: Vec<Vec<usize>> = Vec::new();
        let mut after_sideways = true;
        for column in columns {
            let turned = sideways(&column);
            match parts.last_mut() {
                Some(part) if !turned && !after_sideways => part.extend(column),
                _ => parts.push(column),
            }
            after_sideways = turned;
        }
        if parts.len() > 1 {
            parts.into_iter().for_each(|part| xy_cut(part, lines, em, out));
            return;
        }
    }
    let bands = split_y(&region, lines, 0.0);
    if bands.len() < 2 {
        let mut region = region;
        region.sort_by(|&a, &b| lines[b].top.total_cmp(&lines[a].top).then(lines[a].x0.total_cmp(&lines[b].x0)));
        out.extend(region);
        return;
    }
    let groups = shared_gutters(bands.clone(), lines, em);
    let parts = if groups.len() > 1 { groups } else { bands };
    parts.into_iter().for_each(|part| xy_cut(part, lines, em, out));
}

/// Columns of text are read one after the other; narrower ones are a table's, read row by row.
const COLUMN_WIDTH: f32 = 8.0;

/// Whether a column is as wide as a column of text (a table's cell columns are narrower).
fn wide(column: &[usize], lines: &[Line], em: f32) -> bool {
    let x0 = column.iter().map(|&i| lines[i].x0).fold(f32::INFINITY, f32::min);
    let x1 = column.iter().map(|&i| lines[i].x1).fold(f32::NEG_INFINITY, f32::max);
    x1 - x0 >= COLUMN_WIDTH * em
}

/// The region cut at every gap between line boxes taller than `gap`, top to bottom.
fn split_y(region: &[usize], lines: &[Line], gap: f32) -> Vec<Vec<usize>> {
    let mut sorted = region.to_vec();
    sorted.sort_by(|&a, &b| lines[b].top.total_cmp(&lines[a].top));
    let mut bands: Vec<Vec<usize>> = Vec::new();
    let mut floor = f32::INFINITY;
    for i in sorted {
        if bands.is_empty() || floor - lines[i].top > gap {
            bands.push(Vec::new());
            floor = lines[i].bottom;
        }
        floor = floor.min(lines[i].bottom);
        bands.last_mut().expect("a band").push(i);
    }
    bands
}

/// The region cut at every gap between line boxes wider than `gap`, left to right.
fn split_x(region: &[usize], lines: &[Line], gap: f32) -> Vec<Vec<usize>> {
    let mut sorted = region.to_vec();
    sorted.sort_by(|&a, &b| lines[a].x0.total_cmp(&lines[b].x0));
    let mut parts: Vec<Vec<usize>> = Vec::new();
    let mut right = f32::NEG_INFINITY;
    for i in sorted {
        if parts.is_empty() || lines[i].x0 - right > gap {
            parts.push(Vec::new());
        }
        right = right.max(lines[i].x1);
        parts.last_mut().expect("a part").push(i);
    }
    // Each column top to bottom, as the region's lines were.
    parts
}

/// The stretches of `[x0, x1]` no line of the band covers, at least `gap` wide.
fn free_spans(band: &[usize], lines: &[Line], x0: f32, x1: f32, gap: f32) -> Vec<(f32, f32)> {
    let mut covered: Vec<(f32, f32)> = band.iter().map(|&i| (lines[i].x0, lines[i].x1)).collect();
    covered.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut spans = Vec::new();
    let mut at = x0;
    for (start, end) in covered {
        if start - at >= gap {
            spans.push((at, start));
        }
        at = at.max(end);
    }
    if x1 - at >= gap {
        spans.push((at, x1));
    }
    spans
}

/// Consecutive bands grouped while they share a free stretch at least an em wide that one of
/// them at least has text on both sides of (a gutter; the margin beside a centred title and the
/// end of a heading's line are none).
fn shared_gutters(bands: Vec<Vec<usize>>, lines: &[Line], em: f32) -> Vec<Vec<usize>> {
    let all = bands.iter().flatten();
    let x0 = all.clone().map(|&i| lines[i].x0).fold(f32::INFINITY, f32::min);
    let x1 = all.map(|&i| lines[i].x1).fold(f32::NEG_INFINITY, f32::max);
    let gap = GUTTER * em;
    let straddles =
        |band: &[usize], (start, end): (f32, f32)| band.iter().any(|&i| lines[i].x1 <= start) && band.iter().any(|&i| lines[i].x0 >= end);
    // Each group's bands and the free stretches they all share.
    type Group = (Vec<Vec<usize>>, Vec<(f32, f32)>);
    let mut groups: Vec<Group> = Vec::new();
    for band in bands {
        let spans = free_spans(&band, lines, x0, x1, gap);
        if let Some((group, shared)) = groups.last_mut() {
            let common: Vec<(f32, f32)> = shared
                .iter()
                .flat_map(|&(a0, a1)| spans.iter().map(move |&(b0, b1)| (a0.max(b0), a1.min(b1))))
                .filter(|&(s, e)| e - s >= gap && group.iter().chain([&band]).any(|b| straddles(b, (s, e))))
                .collect();
            if !common.is_empty() {
                group.push(band);
                *shared = common;
                continue;
            }
        }
        groups.push((vec![band], spans));
    }
    groups.into_iter().map(|(group, _)| group.concat()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(page: &mut PageText) -> String {
        page.finish().into_iter().map(|l| l.text).collect::<Vec<_>>().join("\n")
    }

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
        assert_eq!(text(&mut page), "Efficient offices\nworkflows");
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
        assert_eq!(text(&mut page), "up1");
    }

    #[test]
    fn a_footnote_marker_is_a_word_of_its_own() {
        let mut page = PageText::default();
        page.push(Char { text: Some("1".into()), start: [0.0, 104.0], end: [4.0, 104.0], direction: [1.0, 0.0], size: 7.0 });
        run(&mut page, "The", 4.0, 100.0, 5.0);
        assert_eq!(text(&mut page), "1 The");
    }

    /// A line of size 10 from x0 to x1 on baseline y.
    fn line(text: &str, x0: f32, x1: f32, y: f32) -> Line {
        Line { text: text.into(), x0, x1, bottom: y - 1.0, top: y + 7.0, size: 10.0, horizontal: true, piece: false, index: 0 }
    }

    fn ordered(lines: Vec<Line>) -> Vec<String> {
        reading_order(lines).into_iter().map(|l| l.text).collect()
    }

    #[test]
    fn columns_read_one_after_the_other_and_a_footer_drawn_first_comes_last() {
        let lines = vec![
            line("footer", 72.0, 150.0, 40.0),
            line("left 1", 72.0, 280.0, 700.0),
            line("left 2", 72.0, 280.0, 688.0),
            line("right 1", 300.0, 520.0, 700.0),
            line("right 2", 300.0, 520.0, 688.0),
            // A paragraph gap in the right column only.
            line("right 3", 300.0, 480.0, 664.0),
            line("left 3", 72.0, 200.0, 676.0),
        ];
        assert_eq!(ordered(lines), ["left 1", "left 2", "left 3", "right 1", "right 2", "right 3", "footer"]);
    }

    #[test]
    fn a_title_across_the_columns_comes_first() {
        let lines = vec![
            line("left 1", 72.0, 280.0, 700.0),
            line("right 1", 300.0, 520.0, 700.0),
            line("left 2", 72.0, 280.0, 688.0),
            line("right 2", 300.0, 520.0, 688.0),
            line("A title over both columns", 72.0, 520.0, 712.0),
        ];
        assert_eq!(ordered(lines), ["A title over both columns", "left 1", "left 2", "right 1", "right 2"]);
    }

    /// Two columns drawn row by row (a left line, then the right one at its height) read one
    /// after the other; a table's narrow cells drawn the same way stay rows.
    #[test]
    fn pieces_of_a_row_are_columns_when_wide_and_a_table_row_when_narrow() {
        let mut page = PageText::default();
        for (i, y) in [700.0, 687.0, 674.0].into_iter().enumerate() {
            run(&mut page, &format!("left column line {i} with enough words"), 56.0, y, 5.0);
            run(&mut page, &format!("right column line {i} with enough words"), 310.0, y, 5.0);
        }
        let columns = text(&mut page);
        assert!(columns.starts_with("left column line 0 with enough words\nleft column line 1"), "{columns}");
        assert!(columns.ends_with("left column line 2 with enough words\nright column line 0 with enough words\nright column line 1 with enough words\nright column line 2 with enough words"), "{columns}");
        let mut page = PageText::default();
        for (y, cells) in [(700.0, ["Item", "Price"]), (687.0, ["Tea", "2 EUR"]), (674.0, ["Bread", "3 EUR"])] {
            run(&mut page, cells[0], 56.0, y, 5.0);
            run(&mut page, cells[1], 200.0, y, 5.0);
        }
        assert_eq!(text(&mut page), "Item Price\nTea 2 EUR\nBread 3 EUR");
    }

    /// A centred title over a heading: the margins beside them are no gutter.
    #[test]
    fn a_centred_title_then_a_heading_then_the_body() {
        let lines = vec![
            line("Annual Review", 233.0, 361.0, 750.0),
            line("Budget", 78.0, 140.0, 722.0),
            line("The committee met on Tuesday to review the budget.", 78.0, 516.0, 700.0),
            line("members agreed.", 78.0, 403.0, 688.0),
        ];
        assert_eq!(
            ordered(lines.clone()),
            ["Annual Review", "Budget", "The committee met on Tuesday to review the budget.", "members agreed."]
        );
        // A page mostly in another direction keeps the stream's order.
        let mut turned = lines;
        turned.reverse();
        for line in &mut turned[..3] {
            line.horizontal = false;
        }
        assert_eq!(ordered(turned)[0], "members agreed.");
    }

    /// A caption turned 90 degrees up a table's left side, drawn after the page's body and its
    /// footer first: read after the text above the table, before the table's rows.
    #[test]
    fn a_sideways_caption_is_read_beside_its_table() {
        let mut page = PageText::default();
        run(&mut page, "Footer of the page", 72.0, 40.0, 5.0);
        run(&mut page, "Text above the table, long enough to be a column of text", 72.0, 700.0, 5.0);
        for (row, y) in [("Shelf", 640.0), ("A1", 626.0), ("B2", 612.0), ("C3", 598.0)].into_iter() {
            run(&mut page, row, 110.0, y, 5.0);
            run(&mut page, "42", 200.0, y, 5.0);
        }
        run(&mut page, "Text below the table, long enough to be a column of text", 72.0, 560.0, 5.0);
        // Upwards from the bottom of the table, at x = 95.
        for (i, c) in "Cores".chars().enumerate() {
            let y = 600.0 + i as f32 * 5.0;
            page.push(Char { text: Some(c.into()), start: [95.0, y], end: [95.0, y + 5.0], direction: [0.0, 1.0], size: 8.0 });
        }
        assert_eq!(
            text(&mut page),
            "Text above the table, long enough to be a column of text\nCores\nShelf 42\nA1 42\nB2 42\nC3 42\n\
             Text below the table, long enough to be a column of text\nFooter of the page"
        );
    }

    #[test]
    fn unknown_glyphs_are_counted_not_written() {
        let mut page = PageText::default();
        page.push(Char { text: None, start: [0.0, 0.0], end: [5.0, 0.0], direction: [1.0, 0.0], size: 10.0 });
        run(&mut page, "ok", 5.0, 0.0, 5.0);
        assert_eq!(text(&mut page), "ok");
        assert_eq!((page.glyphs, page.unknown), (3, 1));
    }
}
