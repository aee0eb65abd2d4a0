//! A web page's visible text: tags dropped, with `<script>`, `<style>` and the other invisible
//! elements dropped with their content; headings kept as Markdown headings, list items as `- `,
//! block elements as line breaks, entities decoded. A tolerant scanner rather than a full HTML5
//! parser: pages are read for their words, and a stray `<` must not lose them.

/// Elements whose content is not shown.
const HIDDEN: [&str; 8] = ["script", "style", "noscript", "template", "svg", "head", "iframe", "object"];

/// Elements that start a new line.
const BLOCKS: [&str; 26] = [
    "p",
    "div",
    "br",
    "hr",
    "li",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "tr",
    "table",
    "section",
    "article",
    "header",
    "footer",
    "nav",
    "aside",
    "main",
    "blockquote",
    "pre",
    "figure",
    "figcaption",
    "form",
    "address",
    "title",
];

pub(crate) fn visible_text(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    let mut hidden_until: Option<String> = None;
    let mut title_seen = false;
    // Once no `</title` follows, none follows any later point either: a page of unclosed
    // `<title>` tags is then not searched to its end once per tag.
    let mut title_end_ahead = true;
    while let Some(open) = rest.find('<') {
        if hidden_until.is_none() {
            push_text(&mut out, &rest[..open]);
        }
        rest = &rest[open..];
        if let Some(after) = rest.strip_prefix("<!--") {
            rest = after.find("-->").map_or("", |end| &after[end + 3..]);
            continue;
        }
        let Some(close) = rest.find('>') else {
            // An unclosed `<`: the rest is text.
            if hidden_until.is_none() {
                push_text(&mut out, rest);
            }
            rest = "";
            break;
        };
        let tag = &rest[1..close];
        rest = &rest[close + 1..];
        let closing = tag.starts_with('/');
        let name: String =
            tag.trim_start_matches('/').chars().take_while(|c| c.is_ascii_alphanumeric()).collect::<String>().to_ascii_lowercase();
        if name.is_empty() {
            // `<!DOCTYPE>`, `<?xml?>` or a lone `<` in text.
            if !tag.starts_with(['!', '?']) && hidden_until.is_none() {
                push_text(&mut out, &format!("<{tag}>"));
            }
            continue;
        }
        // The page's title is in its head: keep it as the first heading.
        if name == "title" && !closing && hidden_until.as_deref().is_none_or(|h| h == "head") {
            match title_end_ahead.then(|| find_ignoring_case(rest, "</title")).flatten() {
                Some(end) => {
                    let title = collapse(&decode_entities(&rest[..end]));
                    if !title_seen && !title.trim().is_empty() {
                        out.push_str(&format!("# {}\n", title.trim()));
                    }
                    title_seen = true;
                    rest = &rest[end..];
                }
                None => title_end_ahead = false,
            }
            continue;
        }
        if let Some(hidden) = &hidden_until {
            if closing && *hidden == name {
                hidden_until = None;
            }
            continue;
        }
        if !closing && HIDDEN.contains(&name.as_str()) && !tag.ends_with('/') {
            hidden_until = Some(name);
            continue;
        }
        if let Some(level) = heading_level(&name) {
            new_line(&mut out);
            if !closing {
                out.push_str(&"#".repeat(level));
                out.push(' ');
            }
        } else if name == "li" && !closing {
            new_line(&mut out);
            out.push_str("- ");
        } else if BLOCKS.contains(&name.as_str()) {
            new_line(&mut out);
        } else if (name == "td" || name == "th") && !closing && !out.ends_with('\n') && !out.is_empty() {
            out.push_str(" | ");
        }
    }
    if hidden_until.is_none() {
        push_text(&mut out, rest);
    }
    // Blank lines and trailing spaces left by the markup go.
    out.lines().map(str::trim).filter(|l| !l.is_empty() && *l != "-").collect::<Vec<_>>().join("\n")
}

/// Where `needle` (ASCII) first starts in `haystack`, ignoring ASCII case: a char boundary.
fn find_ignoring_case(haystack: &str, needle: &str) -> Option<usize> {
    haystack.as_bytes().windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

fn heading_level(name: &str) -> Option<usize> {
    let digit = name.strip_prefix('h')?;
    let level: usize = digit.parse().ok()?;
    (1..=6).contains(&level).then_some(level)
}

fn new_line(out: &mut String) {
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
}

/// Text between tags: whitespace collapsed as a browser does, entities decoded.
fn push_text(out: &mut String, raw: &str) {
    let text = collapse(&decode_entities(raw));
    if text.trim().is_empty() {
        if !text.is_empty() && !out.is_empty() && !out.ends_with([' ', '\n']) {
            out.push(' ');
        }
        return;
    }
    let text = if out.is_empty() || out.ends_with(['\n', ' ']) { text.trim_start() } else { &text };
    out.push_str(text);
}

fn collapse(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() && c != '\u{a0}' {
            space = true;
        } else {
            if space {
                out.push(' ');
            }
            space = false;
            out.push(if c == '\u{a0}' { ' ' } else { c });
        }
    }
    if space {
        out.push(' ');
    }
    out
}

/// Numeric references and the named entities text commonly uses.
fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest[1..].find(|c: char| !(c.is_ascii_alphanumeric() || c == '#')).map(|i| i + 1).unwrap_or(rest.len());
        let name = &rest[1..end];
        let decoded = if let Some(number) = name.strip_prefix('#') {
            let code = match number.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok(),
                None => number.parse().ok(),
            };
            code.and_then(char::from_u32).map(String::from)
        } else {
            named_entity(name).map(String::from)
        };
        match decoded {
            Some(d) => {
                out.push_str(&d);
                rest = &rest[end..];
                rest = rest.strip_prefix(';').unwrap_or(rest);
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn named_entity(name: &str) -> Option<&'static str> {
    Some(match name {
        "amp" => "&",
        "lt" => "<",
        "gt" => ">",
        "quot" => "\"",
        "apos" => "'",
        "nbsp" => "\u{a0}",
        "ndash" => "–",
        "mdash" => "—",
        "hellip" => "…",
        "lsquo" => "‘",
        "rsquo" => "’",
        "ldquo" => "“",
        "rdquo" => "”",
        "laquo" => "«",
        "raquo" => "»",
        "copy" => "©",
        "reg" => "®",
        "trade" => "™",
        "deg" => "°",
        "times" => "×",
        "middot" => "·",
        "bull" => "•",
        "euro" => "€",
        "pound" => "£",
        "eacute" => "é",
        "egrave" => "è",
        "agrave" => "à",
        "auml" => "ä",
        "ouml" => "ö",
        "uuml" => "ü",
        "szlig" => "ß",
        "ccedil" => "ç",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_text_with_headings() {
        let html = r#"<!DOCTYPE html><html><head><title>Trip &amp; notes</title><style>p { color: red }</style>
            <script>var x = "<p>hidden</p>";</script></head>
            <body><h1>Day one</h1><p>We walked   to the
            <b>old</b> harbour&nbsp;at 5&#160;pm.</p><ul><li>Bread</li><li>Cheese</li></ul>
            <!-- a comment --><table><tr><th>Item</th><th>Price</th></tr><tr><td>Tea</td><td>2 &euro;</td></tr></table>
            <h2>Day two</h2><noscript>Enable JavaScript</noscript><p>Rain.</p></body></html>"#;
        assert_eq!(
            visible_text(html),
            "# Trip & notes\n# Day one\nWe walked to the old harbour at 5 pm.\n- Bread\n- Cheese\nItem | Price\nTea | 2 €\n## Day two\nRain."
        );
    }

    /// Found writing the document_html fuzz target: each unclosed `<title>` searched the rest of the page
    /// for its end, lower-casing a copy of it first, so a page of them took quadratic time (a
    /// 1.4 MB one, hours).
    #[test]
    fn unclosed_titles_take_linear_time() {
        let page = format!("<TITLE>{}words", "<title>".repeat(200_000));
        let started = std::time::Instant::now();
        assert_eq!(visible_text(&page), "words");
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
        assert_eq!(visible_text("<title>a</TITLE><title>b</title><p>c"), "# a\nc");
    }
}
