//! How a document reads in a prompt: the one place that decides it. The text sits between
//! `<document>` tags that name the file (and its page count), with a `[page N]` marker before
//! each page of a PDF, so a model can say where an answer came from; source code sits in a
//! Markdown fence tagged with its language.

use crate::format::fence_tag;
use crate::{Document, DocumentFormat};

/// The document as the user turn carries it; with `images_given` (the model reads images and the
/// turn carries `Document::page_images`) a scanned page is marked as given as an image.
pub fn render_for_prompt(document: &Document, images_given: bool) -> String {
    let mut out = format!("<document name=\"{}\"", attribute(&document.name));
    if let Some(pages) = document.page_count() {
        out.push_str(&format!(" pages=\"{pages}\""));
    }
    out.push_str(">\n");
    for note in &document.notes {
        out.push_str(&format!("(Note: {note}.)\n"));
    }
    match &document.format {
        DocumentFormat::Code { language } => {
            let fence = fence_for(&document.text());
            out.push_str(&format!("{fence}{}\n{}\n{fence}\n", fence_tag(language), document.text()));
        }
        _ => {
            for section in &document.sections {
                match section.page {
                    Some(page) if images_given && document.page_images().any(|(p, _)| p == page) => {
                        out.push_str(&format!("[page {page}: scanned, given as an image]\n"));
                    }
                    Some(page) => out.push_str(&format!("[page {page}]\n")),
                    None => {}
                }
                if !section.text.is_empty() {
                    out.push_str(&section.text);
                    out.push('\n');
                }
            }
        }
    }
    out.push_str("</document>");
    out
}

/// A passage found by search, as [`render_passages_for_prompt`] shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassageSource<'a> {
    /// The document's name.
    pub document: &'a str,
    pub page: Option<u32>,
    /// The headings it is under, outermost first.
    pub headings: &'a [String],
    pub text: &'a str,
}

/// Passages found in documents too long to go whole, as the user turn carries them (in place
/// of the documents, before the question): each in a `<passage>` tag with its number (from 1,
/// in order: the number the reply's Sources show), its document, its page and its section, so a
/// model can cite them as "[1]"; the whole between `<search_results>` tags that say they are
/// excerpts.
pub fn render_passages_for_prompt(passages: &[PassageSource<'_>]) -> String {
    let mut out = String::from(
        "<search_results note=\"excerpts of the attached documents found for this question; cite one by its number, as [1]\">\n",
    );
    for (index, passage) in passages.iter().enumerate() {
        out.push_str(&format!("<passage number=\"{}\" document=\"{}\"", index + 1, attribute(passage.document)));
        if let Some(page) = passage.page {
            out.push_str(&format!(" page=\"{page}\""));
        }
        if !passage.headings.is_empty() {
            out.push_str(&format!(" section=\"{}\"", attribute(&passage.headings.join(" › "))));
        }
        out.push_str(">\n");
        out.push_str(passage.text.trim_end());
        out.push_str("\n</passage>\n");
    }
    out.push_str("</search_results>");
    out
}

/// A user turn's text with its documents: each document (`render_for_prompt`) before the words
/// the person typed, so the question comes last, next to the answer.
pub fn with_documents(documents: &[impl AsRef<str>], text: &str) -> String {
    let mut parts: Vec<&str> = documents.iter().map(AsRef::as_ref).collect();
    if !text.is_empty() {
        parts.push(text);
    }
    parts.join("\n\n")
}

/// A file name as an attribute value: no quotes or angle brackets to end the tag early.
fn attribute(name: &str) -> String {
    name.replace('"', "'").replace(['<', '>'], "_")
}

/// A code fence longer than any run of backticks in the code.
fn fence_for(code: &str) -> String {
    let longest = code.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Section;

    #[test]
    fn documents_come_before_the_question() {
        assert_eq!(
            with_documents(&["<document name=\"a\">\nA\n</document>"], "What is A?"),
            "<document name=\"a\">\nA\n</document>\n\nWhat is A?"
        );
        assert_eq!(with_documents(&["one", "two"], ""), "one\n\ntwo");
        assert_eq!(with_documents(&[] as &[&str], "Hi"), "Hi");
    }

    #[test]
    fn passages_name_their_document_page_and_section() {
        let headings = ["Budget".to_string(), "Library <new>".to_string()];
        let passages = [
            PassageSource { document: "r \"1\".pdf", page: Some(3), headings: &headings, text: "Funded first.\n" },
            PassageSource { document: "notes.md", page: None, headings: &[], text: "Plain." },
        ];
        assert_eq!(
            render_passages_for_prompt(&passages),
            "<search_results note=\"excerpts of the attached documents found for this question; cite one by its number, as [1]\">\n\
             <passage number=\"1\" document=\"r '1'.pdf\" page=\"3\" section=\"Budget › Library _new_\">\nFunded first.\n</passage>\n\
             <passage number=\"2\" document=\"notes.md\">\nPlain.\n</passage>\n</search_results>"
        );
    }

    #[test]
    fn pages_are_marked_and_code_is_fenced() {
        let pdf = Document {
            name: "a \"q\".pdf".into(),
            format: DocumentFormat::Pdf,
            sections: vec![Section { page: Some(1), text: "One".into() }, Section { page: Some(2), text: "Two".into() }],
            notes: vec![],
            scanned_pages: vec![],
        };
        assert_eq!(render_for_prompt(&pdf, false), "<document name=\"a 'q'.pdf\" pages=\"2\">\n[page 1]\nOne\n[page 2]\nTwo\n</document>");
        let code = Document {
            name: "main.rs".into(),
            format: DocumentFormat::Code { language: "Rust".into() },
            sections: vec![Section { page: None, text: "fn main() {}".into() }],
            notes: vec!["read as Latin-1".into()],
            scanned_pages: vec![],
        };
        assert_eq!(
            render_for_prompt(&code, false),
            "<document name=\"main.rs\">\n(Note: read as Latin-1.)\n```rust\nfn main() {}\n```\n</document>"
        );
    }
}
