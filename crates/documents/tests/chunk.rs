//! Passages of the documents real producers made (tests/reference/make_documents.py): pages and
//! headings kept, every word of the document in some passage, spans that point back at the text.

use std::path::PathBuf;

use confab_documents::chunk::estimate_tokens;
use confab_documents::{chunk_document, read_document_file, ChunkSettings, Document};

fn read(name: &str) -> Document {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    read_document_file(&path).unwrap_or_else(|e| panic!("{e}"))
}

fn words(text: &str) -> Vec<&str> {
    text.split_whitespace().filter(|w| !w.starts_with('#')).collect()
}

#[test]
fn every_fixture_is_covered_by_passages_that_point_back_at_it() {
    for name in ["two_pages.pdf", "report.pdf", "unicode.pdf", "layout.pdf", "forms.pdf", "notes.docx"] {
        let document = read(name);
        for settings in [ChunkSettings::default(), ChunkSettings { target_tokens: 16, overlap_tokens: 4 }] {
            let passages = chunk_document(&document, &settings);
            assert!(!passages.is_empty(), "{name}");
            for passage in &passages {
                let section = &document.sections[passage.section];
                assert_eq!(&section.text[passage.span.clone()], passage.text, "{name}");
                assert_eq!(passage.page, section.page, "{name}");
                assert_eq!(passage.document, name);
            }
            // Every word is in a passage (headings at least in a passage's heading path).
            for (index, section) in document.sections.iter().enumerate() {
                let covered: Vec<&str> = passages
                    .iter()
                    .filter(|p| p.section == index)
                    .flat_map(|p| words(&p.text).into_iter().chain(p.headings.iter().flat_map(|h| h.split_whitespace())))
                    .collect();
                for word in words(&section.text) {
                    assert!(covered.contains(&word), "{name} page {:?}: {word:?} is in no passage", section.page);
                }
            }
        }
    }
}

#[test]
fn a_pdf_keeps_its_pages_and_a_docx_its_headings() {
    let report = chunk_document(&read("report.pdf"), &ChunkSettings::default());
    assert_eq!(report.iter().map(|p| p.page).collect::<Vec<_>>(), [Some(1), Some(2)]);
    assert!(report[1].text.contains("treasurer"));

    let notes = chunk_document(&read("notes.docx"), &ChunkSettings { target_tokens: 16, overlap_tokens: 0 });
    let risks = notes.iter().find(|p| p.text.contains("image-only")).expect("the risks paragraph");
    assert_eq!(risks.headings, ["Project notes", "Goals", "Risks"]);
    for passage in &notes {
        assert!(!passage.text.trim_end().lines().last().unwrap().starts_with('#'), "a heading ends {passage:?}");
        assert!(estimate_tokens(&passage.text) <= 16 * 2, "{passage:?}");
    }
}
