//! Documents made by real producers (tests/reference/make_documents.py: reportlab, pypdf,
//! python-docx) read back: the text the producer was given, in order, on the right pages; and each
//! problem named as such.

use std::path::PathBuf;

use confab_documents::{read_document, read_document_file, render_for_prompt, Document, DocumentFormat, DocumentProblem};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn expected() -> serde_json::Value {
    let text = std::fs::read_to_string(fixture("expected.json")).unwrap_or_else(|e| panic!("expected.json: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("expected.json: {e}"))
}

fn read(name: &str) -> Document {
    read_document_file(&fixture(name)).unwrap_or_else(|e| panic!("{e}"))
}

fn problem(name: &str) -> DocumentProblem {
    match read_document_file(&fixture(name)) {
        Ok(document) => panic!("{name} read without an error: {document:?}"),
        Err(error) => {
            assert_eq!(error.file, name, "errors name the file");
            error.problem
        }
    }
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn a_two_page_pdf_keeps_its_lines_and_page_numbers() {
    let document = read("two_pages.pdf");
    assert_eq!(document.format, DocumentFormat::Pdf);
    assert_eq!(document.page_count(), Some(2));
    let pages = expected()["two_pages.pdf"].clone();
    for (i, section) in document.sections.iter().enumerate() {
        assert_eq!(section.page, Some(i as u32 + 1));
        // Line for line, Latin-1 accents included.
        assert_eq!(section.text, pages[i].as_str().unwrap_or_default(), "page {}", i + 1);
    }
    assert!(document.notes.is_empty(), "{:?}", document.notes);
}

#[test]
fn a_flowing_reportlab_pdf_reads_in_order_across_a_page_break() {
    let document = read("report.pdf");
    assert_eq!(document.page_count(), Some(2));
    let pages = expected()["report.pdf"].clone();
    for (i, section) in document.sections.iter().enumerate() {
        // Paragraphs wrap where the layout put them: compared with whitespace collapsed.
        assert_eq!(collapse(&section.text), pages[i].as_str().unwrap_or_default(), "page {}", i + 1);
    }
    // The wrapped paragraph keeps its words apart across line ends.
    assert!(document.sections[0].text.lines().count() >= 4, "{}", document.sections[0].text);
}

#[test]
fn unicode_text_through_an_embedded_font_and_a_rotated_page() {
    let document = read("unicode.pdf");
    assert_eq!(document.page_count(), Some(2));
    let pages = expected()["unicode.pdf"].clone();
    for (i, section) in document.sections.iter().enumerate() {
        assert_eq!(section.text, pages[i].as_str().unwrap_or_default(), "page {}", i + 1);
    }
}

#[test]
fn columns_read_one_after_the_other_and_table_rows_as_lines() {
    let document = read("layout.pdf");
    let text = &document.sections[0].text;
    assert_eq!(collapse(text), expected()["layout.pdf"][0].as_str().unwrap_or_default());
    for row in ["Item Price", "Tea 2 EUR", "Bread 3 EUR"] {
        assert!(text.lines().any(|line| line == row), "{row:?} is not a line of:\n{text}");
    }
}

#[test]
fn text_drawn_through_forms_is_read_nested_and_moved() {
    let document = read("forms.pdf");
    assert_eq!(document.sections[0].text, expected()["forms.pdf"][0].as_str().unwrap_or_default());
}

#[test]
fn the_prompt_rendering_marks_pages() {
    let rendered = render_for_prompt(&read("two_pages.pdf"), false);
    assert!(rendered.starts_with("<document name=\"two_pages.pdf\" pages=\"2\">\n[page 1]\nQuarterly report\n"), "{rendered}");
    assert!(rendered.contains("\n[page 2]\nOutlook\nWe expect a calm winter.\n"), "{rendered}");
    assert!(rendered.ends_with("</document>"));
}

#[test]
fn an_encrypted_pdf_asks_for_one_without_a_password() {
    assert_eq!(problem("encrypted.pdf"), DocumentProblem::Encrypted);
}

#[test]
fn a_pdf_with_only_an_owner_password_reads() {
    let document = read("owner_only.pdf");
    assert_eq!(document.page_count(), Some(2));
    assert_eq!(document.sections[1].text, expected()["two_pages.pdf"][1].as_str().unwrap_or_default());
}

#[test]
fn a_scanned_pdf_reads_as_its_page_image() {
    let document = read("scanned.pdf");
    assert_eq!(document.page_count(), Some(1));
    assert!(document.only_scanned());
    let images: Vec<_> = document.page_images().collect();
    assert_eq!(images.len(), 1, "{:?}", document.scanned_pages);
    let (page, image) = images[0];
    assert_eq!(page, 1);
    // reportlab stores the 600×200 gray PNG it is given as Flate-compressed pixels; they come
    // back as a PNG of the same size that decodes (the media crate's decoder, as the engine's).
    assert_eq!((image.mime, image.width, image.height), ("image/png", 600, 200));
    let decoded =
        confab_media::decode_image_bytes("page", &image.bytes, &confab_media::MediaLimits::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((decoded.width(), decoded.height()), (600, 200));
    assert!(
        document.notes[0].starts_with(
            "page 1 is scanned (an image of text, no text layer): a vision model (one that reads images) is given it as an image"
        ),
        "{:?}",
        document.notes
    );
    let given = render_for_prompt(&document, true);
    assert!(given.contains("[page 1: scanned, given as an image]"), "{given}");
    assert!(!render_for_prompt(&document, false).contains("given as an image]"));
}

#[test]
fn a_scanned_jpeg_page_gives_its_jpeg_bytes_as_they_are() {
    let document = read("scanned_jpeg.pdf");
    let images: Vec<_> = document.page_images().collect();
    assert_eq!(images.iter().map(|(page, _)| *page).collect::<Vec<_>>(), vec![2], "{:?}", document.notes);
    let (_, image) = images[0];
    assert_eq!(image.mime, "image/jpeg");
    assert!(image.bytes.starts_with(&[0xFF, 0xD8]), "a JPEG starts with SOI");
    let decoded =
        confab_media::decode_image_bytes("page", &image.bytes, &confab_media::MediaLimits::default()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((decoded.width(), decoded.height()), (image.width, image.height));
    // Page 1 has its text, page 2 is the scan.
    assert!(!document.sections[0].text.is_empty());
    assert!(!document.only_scanned());
}

#[test]
fn a_pdf_with_no_text_and_no_image_is_named_as_having_no_text_layer() {
    let problem = problem("blank.pdf");
    assert_eq!(problem, DocumentProblem::NoTextLayer { pages: 1 });
    assert!(problem.to_string().starts_with("this PDF has no text layer: it is scanned pages"), "{problem}");
}

#[test]
fn a_truncated_pdf_is_damaged() {
    assert!(matches!(problem("truncated.pdf"), DocumentProblem::Damaged { .. }));
}

#[test]
fn a_word_document_keeps_headings_and_paragraphs() {
    let document = read("notes.docx");
    assert_eq!(document.format, DocumentFormat::Docx);
    assert_eq!(document.page_count(), None);
    assert_eq!(document.text(), expected()["notes.docx"].as_str().unwrap_or_default());
}

#[test]
fn a_docx_name_on_other_bytes_is_damaged() {
    let problem = problem("not_a.docx");
    assert!(matches!(&problem, DocumentProblem::Damaged { detail } if detail.contains("not a Word document")), "{problem}");
}

#[test]
fn text_formats() {
    let markdown = read_document("notes.md", "# Title\n\nSome *text*.\n".as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(markdown.format, DocumentFormat::Markdown);
    assert_eq!(markdown.text(), "# Title\n\nSome *text*.");

    let code = read_document("lib.py", b"def f():\n    return 1\n").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(code.format, DocumentFormat::Code { language: "Python".into() });
    assert_eq!(render_for_prompt(&code, false), "<document name=\"lib.py\">\n```python\ndef f():\n    return 1\n```\n</document>");

    let csv = read_document("prices.csv", b"item,price\ntea,2\n").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(csv.text(), "| item | price |\n| --- | --- |\n| tea | 2 |");

    let html = read_document("page.html", b"<html><body><h2>Hi</h2><script>x()</script><p>there</p></body></html>")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(html.text(), "## Hi\nthere");

    let latin1 = read_document("old.txt", b"caf\xe9").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(latin1.text(), "café");
    assert_eq!(latin1.notes.len(), 1);
    assert!(render_for_prompt(&latin1, false).contains("(Note: the file is not UTF-8; it was read as Latin-1"));
}

#[test]
fn problems_are_named() {
    let problem = |name: &str, bytes: &[u8]| read_document(name, bytes).err().map(|e| e.problem);
    assert_eq!(problem("empty.txt", b""), Some(DocumentProblem::EmptyFile));
    assert_eq!(problem("photo.heic", b"data"), Some(DocumentProblem::Unsupported { extension: "heic".into() }));
    assert_eq!(problem("old.doc", b"\xd0\xcf\x11\xe0"), Some(DocumentProblem::Unsupported { extension: "doc".into() }));
    assert_eq!(problem("blob.txt", b"\x00\x01\x02binary"), Some(DocumentProblem::NotText));
    // A PDF whose bytes are cut anywhere, not only at one place, is refused rather than crashing.
    let whole = std::fs::read(fixture("two_pages.pdf")).unwrap_or_else(|e| panic!("{e}"));
    for cut in [10, 100, 500, 900] {
        let result = read_document("cut.pdf", &whole[..cut]);
        assert!(result.is_err() || result.as_ref().is_ok_and(|d| d.page_count().is_some()), "cut at {cut}: {result:?}");
    }
    // A page limit, checked before any page is read, with the words a person acts on.
    let message = DocumentProblem::TooManyPages { pages: 1200, limit: confab_documents::limits::DOCUMENT_PDF_PAGES }.to_string();
    assert!(message.starts_with("the PDF has 1200 pages and the limit is 1000 (document.pdf_pages); split it"), "{message}");
}
