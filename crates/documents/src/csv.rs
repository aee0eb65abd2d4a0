//! Comma- or tab-separated values: small tables become a Markdown table (a model reads rows and
//! columns from one better than from raw CSV), larger ones stay the text they are.

use crate::limits::{CSV_TABLE_MAX_COLUMNS, CSV_TABLE_MAX_ROWS};

pub(crate) fn render(text: &str, delimiter: u8) -> String {
    match parse(text, delimiter as char) {
        Some(rows) if rows.len() <= CSV_TABLE_MAX_ROWS + 1 && rows.first().is_some_and(|r| r.len() <= CSV_TABLE_MAX_COLUMNS) => {
            markdown_table(&rows)
        }
        _ => text.trim_end().to_string(),
    }
}

/// RFC 4180 records (quoted fields with doubled quotes and line breaks); `None` when the rows
/// are ragged or a quote is left open, which a table would misrepresent.
fn parse(text: &str, delimiter: char) -> Option<Vec<Vec<String>>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() => quoted = true,
            (false, c) if c == delimiter => row.push(std::mem::take(&mut field)),
            (false, '\r') => {}
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
        if rows.len() > CSV_TABLE_MAX_ROWS + 1 {
            return None;
        }
    }
    if quoted {
        return None;
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    rows.retain(|r| !(r.len() == 1 && r[0].is_empty()));
    let width = rows.first()?.len();
    rows.iter().all(|r| r.len() == width).then_some(rows)
}

fn markdown_table(rows: &[Vec<String>]) -> String {
    let cell = |s: &String| s.replace('|', "\\|").replace('\n', " ");
    let line = |row: &Vec<String>| format!("| {} |", row.iter().map(cell).collect::<Vec<_>>().join(" | "));
    let mut out = vec![line(&rows[0]), format!("|{}", " --- |".repeat(rows[0].len()))];
    out.extend(rows[1..].iter().map(line));
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_tables_become_markdown() {
        let csv = "name,city\n\"Smith, Ann\",Oslo\nBo,\"say \"\"hi\"\"\"\n";
        assert_eq!(render(csv, b','), "| name | city |\n| --- | --- |\n| Smith, Ann | Oslo |\n| Bo | say \"hi\" |");
        // Ragged rows stay text.
        assert_eq!(render("a,b\n1\n", b','), "a,b\n1");
        assert_eq!(render("a\tb\n1\t2", b'\t'), "| a | b |\n| --- | --- |\n| 1 | 2 |");
    }
}
