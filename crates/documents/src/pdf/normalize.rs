//! A PDF's text made fit for the model and the index: typographic ligatures written out (so a
//! search for "office" finds "o\u{FB03}ce"), soft hyphens dropped (a line that ends in one is joined
//! to the next: the word was whole), words hyphenated at a line end joined where the document
//! itself shows the joined word (its own vocabulary is the evidence; "well-known" stays
//! hyphenated when that is how the document writes it elsewhere), and Unicode NFC.

use std::collections::HashSet;

use unicode_normalization::UnicodeNormalization;

/// The pages' texts, normalised together (the vocabulary is the whole document's).
pub(crate) fn normalize_pages(pages: &mut [String]) {
    for page in pages.iter_mut() {
        *page = characters(page);
    }
    let vocabulary: HashSet<String> = pages.iter().flat_map(|p| words(p)).collect();
    for page in pages.iter_mut() {
        *page = join_hyphenated(page, &vocabulary);
    }
}

/// Ligatures expanded, soft hyphens resolved, NFC.
fn characters(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{FB00}' => out.push_str("ff"),
            '\u{FB01}' => out.push_str("fi"),
            '\u{FB02}' => out.push_str("fl"),
            '\u{FB03}' => out.push_str("ffi"),
            '\u{FB04}' => out.push_str("ffl"),
            '\u{FB05}' | '\u{FB06}' => out.push_str("st"),
            '\u{AD}' => {
                // At a line end, the hyphenation point of a whole word: the line break goes too,
                // and the hyphen drawn there for it (Chromium draws one after the soft hyphen).
                let mut ahead = chars.clone();
                while ahead.next_if_eq(&' ').is_some() {}
                let _ = ahead.next_if(|&c| c == '-' || c == '\u{2010}');
                while ahead.next_if_eq(&' ').is_some() {}
                if ahead.peek().is_none_or(|&c| c == '\n') {
                    ahead.next();
                    chars = ahead;
                }
            }
            c => out.push(c),
        }
    }
    out.nfc().collect()
}

/// Lowercased words (runs of letters, digits and hyphens inside a word).
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '\u{2010}'))
        .map(|w| w.trim_matches(|c| c == '-' || c == '\u{2010}'))
        .filter(|w| !w.is_empty())
        .flat_map(|w| {
            // The compound and its parts: "well-known" is evidence for itself and for "well", "known".
            let parts = w.split(['-', '\u{2010}']).filter(|p| !p.is_empty()).map(str::to_lowercase);
            std::iter::once(w.to_lowercase()).chain(parts)
        })
}

/// A line ending in `frag-` followed by a line starting with a lowercase `rest`: joined as
/// `fragrest` when the vocabulary has it, as `frag-rest` when that is how the document writes it,
/// else left as it is.
fn join_hyphenated(text: &str, vocabulary: &HashSet<String>) -> String {
    let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
    let mut i = 0;
    while i + 1 < lines.len() {
        let line = &lines[i];
        let Some(stem) = line.strip_suffix('-').or_else(|| line.strip_suffix('\u{2010}')) else {
            i += 1;
            continue;
        };
        let fragment_start = stem.rfind(|c: char| !c.is_alphabetic()).map_or(0, |p| p + stem[p..].chars().next().map_or(1, char::len_utf8));
        let fragment = &stem[fragment_start..];
        let next = lines[i + 1].trim_start();
        let rest_end = next.find(|c: char| !c.is_alphabetic()).unwrap_or(next.len());
        let rest = &next[..rest_end];
        let joinable = !fragment.is_empty() && rest.chars().next().is_some_and(char::is_lowercase);
        let joined = format!("{fragment}{rest}").to_lowercase();
        let compound = format!("{fragment}-{rest}").to_lowercase();
        let separator = if !joinable {
            None
        } else if vocabulary.contains(&joined) {
            Some("")
        } else if vocabulary.contains(&compound) {
            Some("-")
        } else {
            None
        };
        match separator {
            Some(separator) => {
                let remainder = next[rest_end..].trim_start().to_string();
                lines[i] = format!("{stem}{separator}{rest}");
                if remainder.is_empty() {
                    lines.remove(i + 1);
                } else {
                    lines[i + 1] = remainder;
                }
                // The joined line may end in a hyphen again (a one-word next line): look again.
            }
            None => i += 1,
        }
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normalized(pages: &[&str]) -> Vec<String> {
        let mut pages: Vec<String> = pages.iter().map(|p| p.to_string()).collect();
        normalize_pages(&mut pages);
        pages
    }

    #[test]
    fn ligatures_and_soft_hyphens() {
        assert_eq!(
            normalized(&["E\u{FB03}cient o\u{FB03}ce work\u{FB02}ows, \u{FB00} \u{FB01} \u{FB04} \u{FB05} \u{FB06}"]),
            ["Efficient office workflows, ff fi ffl st st"]
        );
        // A soft hyphen inside a word goes; at a line end it joins the word's halves.
        assert_eq!(normalized(&["labo\u{AD}ratory clari\u{AD}\nfies it"]), ["laboratory clarifies it"]);
        // Chromium draws a hyphen after a soft hyphen that breaks a line.
        assert_eq!(normalized(&["aft\u{AD} \u{2010}\nernoon and pho\u{AD}-\nto"]), ["afternoon and photo"]);
        // A soft hyphen before a word mid-line is no line break.
        assert_eq!(normalized(&["a\u{AD} -b\nc"]), ["a -b\nc"]);
    }

    #[test]
    fn nfc() {
        assert_eq!(normalized(&["cafe\u{301}"]), ["caf\u{e9}"]);
    }

    #[test]
    fn line_end_hyphens_join_where_the_document_shows_the_word() {
        let pages = normalized(&[
            "The reviewers are indep-\nendent and de-\nscribe it.",
            "Independent of that, a well-\nknown and well-known fact.",
        ]);
        // "independent" occurs on page 2: joined. "describe" does not occur: left as it is.
        assert_eq!(pages[0], "The reviewers are independent\nand de-\nscribe it.");
        // "well-known" is how the document writes it: the hyphen stays.
        assert_eq!(pages[1], "Independent of that, a well-known\nand well-known fact.");
        // Capitalised continuations (a name, a new sentence) are not joined.
        assert_eq!(normalized(&["Jean-\nPierre and jean"])[0], "Jean-\nPierre and jean");
    }
}
