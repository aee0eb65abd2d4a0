//! The documents' search index on a real SQLite file: idempotent indexing keyed by document,
//! model and chunking; vector, word and hybrid ranking; questions that look like FTS5 syntax;
//! bad input refused with a message; indexes leaving with their documents.

use confab_store::{
    AttachmentHash, AttachmentMeta, IndexKey, Indexed, NewPassage, PassageQuery, RetrievalMode, Role, Store, StoreError, RRF_K,
};

use crate::{assert_healthy, conversation, store};

const CHUNKING: &str = "chunk-v1-t256-o32";

async fn document(store: &Store, name: &str, text: &str) -> AttachmentHash {
    let meta = AttachmentMeta { mime: "text/markdown".into(), original_name: Some(name.into()), ..Default::default() };
    store.add_attachment_bytes(text.as_bytes().to_vec(), &meta).await.unwrap()
}

fn passage(ordinal: u32, text: &str, vector: &[f32]) -> NewPassage {
    NewPassage {
        ordinal,
        page: Some(ordinal + 1),
        section: ordinal,
        span: 0..text.len() as u32,
        headings: vec!["Guide".into(), format!("Part {ordinal}")],
        text: text.into(),
        vector: vector.to_vec(),
    }
}

/// Three passages whose vectors point three ways.
fn passages() -> Vec<NewPassage> {
    vec![
        passage(0, "The library renovation is funded before the sports hall.", &[1.0, 0.0, 0.0]),
        passage(1, "The treasurer publishes the accounts in March.", &[0.0, 1.0, 0.0]),
        passage(2, "Volunteers repaint the library benches every spring.", &[0.0, 0.0, 1.0]),
    ]
}

fn query<'a>(text: &'a str, vector: Option<&'a [f32]>, documents: &'a [AttachmentHash], mode: RetrievalMode) -> PassageQuery<'a> {
    PassageQuery { text, vector, model: "embedder", chunking: CHUNKING, documents, k: 5, mode, rrf_k: RRF_K }
}

fn ordinals(hits: &[confab_store::PassageHit]) -> Vec<u32> {
    hits.iter().map(|h| h.ordinal).collect()
}

#[tokio::test]
async fn indexing_again_costs_nothing_and_another_model_makes_another_index() {
    let (store, _dir) = store().await;
    let hash = document(&store, "guide.md", "text").await;
    let key = IndexKey { document: &hash, model: "embedder", chunking: CHUNKING };
    assert!(!store.document_indexed(key).await.unwrap());
    assert_eq!(store.index_document(key, &passages()).await.unwrap(), Indexed::Made { passages: 3 });
    assert!(store.document_indexed(key).await.unwrap());
    assert_eq!(store.index_document(key, &passages()).await.unwrap(), Indexed::AlreadyThere);

    let other = IndexKey { model: "other-embedder", ..key };
    assert!(!store.document_indexed(other).await.unwrap());
    let two_d: Vec<NewPassage> = passages().into_iter().map(|p| NewPassage { vector: p.vector[..2].to_vec(), ..p }).collect();
    assert_eq!(store.index_document(other, &two_d).await.unwrap(), Indexed::Made { passages: 3 });
    let rechunked = IndexKey { chunking: "chunk-v1-t128-o16", ..key };
    assert!(!store.document_indexed(rechunked).await.unwrap());

    // Each model searches its own vectors.
    let docs = [hash.clone()];
    let hits = store.search_passages(&query("x", Some(&[0.0, 1.0, 0.0]), &docs, RetrievalMode::Vector)).await.unwrap();
    assert_eq!(hits.len(), 3, "one index's passages, not both");
    let other_query = PassageQuery { model: "other-embedder", ..query("x", Some(&[0.0, 1.0]), &docs, RetrievalMode::Vector) };
    assert_eq!(ordinals(&store.search_passages(&other_query).await.unwrap())[0], 1);

    // Switching models: the old index goes.
    assert_eq!(store.remove_other_document_indexes("other-embedder", CHUNKING).await.unwrap(), 1);
    assert!(!store.document_indexed(key).await.unwrap());
    assert!(store.document_indexed(other).await.unwrap());
    assert_healthy(&store).await;
}

#[tokio::test]
async fn passages_rank_by_vector_by_words_and_fused() {
    let (store, _dir) = store().await;
    let hash = document(&store, "minutes.md", "minutes").await;
    let key = IndexKey { document: &hash, model: "embedder", chunking: CHUNKING };
    store.index_document(key, &passages()).await.unwrap();
    let docs = [hash.clone()];

    // Vectors alone: closest to passage 1, then 0, then 2.
    let near_1: &[f32] = &[0.2, 0.9, 0.1];
    let hits = store.search_passages(&query("anything", Some(near_1), &docs, RetrievalMode::Vector)).await.unwrap();
    assert_eq!(ordinals(&hits), [1, 0, 2]);
    assert!(hits[0].score > hits[1].score && (hits[0].score - 0.9 / (0.86f64).sqrt()).abs() < 1e-6);
    assert_eq!((hits[0].vector_rank, hits[0].text_rank), (Some(1), None));
    let hit = &hits[0];
    assert_eq!((hit.page, hit.section, hit.document_name.as_deref()), (Some(2), 1, Some("minutes.md")));
    assert_eq!(hit.headings, ["Guide", "Part 1"]);
    assert_eq!(hit.document, hash);

    // Words alone (stemmed: "renovating" finds "renovation"); passages without the words are not found.
    let hits = store.search_passages(&query("library renovating?", None, &docs, RetrievalMode::Text)).await.unwrap();
    assert_eq!(ordinals(&hits), [0, 2]);
    assert_eq!(hits[0].text_rank, Some(1));

    // Fused: passage 0 is second by vector and first by words, so first; passage 2 (third by
    // vector, second by words) passes passage 1, first by vector alone.
    let hits = store.search_passages(&query("library renovation", Some(near_1), &docs, RetrievalMode::Hybrid)).await.unwrap();
    assert_eq!(ordinals(&hits), [0, 2, 1]);
    assert_eq!(
        hits.iter().map(|h| (h.vector_rank, h.text_rank)).collect::<Vec<_>>(),
        [(Some(2), Some(1)), (Some(3), Some(2)), (Some(1), None)]
    );
    assert!((hits[0].score - (1.0 / 62.0 + 1.0 / 61.0)).abs() < 1e-12);
    // Hybrid without a vector ranks by words; k limits.
    let words_only = PassageQuery { k: 1, ..query("treasurer", None, &docs, RetrievalMode::Hybrid) };
    assert_eq!(ordinals(&store.search_passages(&words_only).await.unwrap()), [1]);
    // Documents not asked for, or not indexed, are not searched.
    let other = document(&store, "other.md", "other").await;
    assert!(store.search_passages(&query("library", None, &[other], RetrievalMode::Text)).await.unwrap().is_empty());
    assert!(store.search_passages(&query("library", None, &[], RetrievalMode::Text)).await.unwrap().is_empty());
}

#[tokio::test]
async fn questions_that_look_like_fts_syntax_are_just_words() {
    let (store, _dir) = store().await;
    let hash = document(&store, "a.md", "a").await;
    store.index_document(IndexKey { document: &hash, model: "embedder", chunking: CHUNKING }, &passages()).await.unwrap();
    let docs = [hash];
    for question in [
        "\"library",
        "library AND",
        "OR treasurer",
        "NOT (library)",
        "lib*",
        "* ^ :",
        "NEAR(library treasurer, 2)",
        "text: treasurer",
        "-library +treasurer",
        "'single' \"double\" `back`",
        "a\0b",
        "",
        "   ",
    ] {
        for mode in [RetrievalMode::Text, RetrievalMode::Hybrid] {
            let result = store.search_passages(&query(question, Some(&[1.0, 0.0, 0.0]), &docs, mode)).await;
            assert!(result.is_ok(), "{question:?}: {result:?}");
        }
    }
    let hits = store.search_passages(&query("(treasurer) AND \"march\"", None, &docs, RetrievalMode::Text)).await.unwrap();
    assert_eq!(ordinals(&hits), [1]);
}

#[tokio::test]
async fn bad_passages_and_queries_are_refused_with_a_reason() {
    let (store, _dir) = store().await;
    let hash = document(&store, "a.md", "a").await;
    let key = IndexKey { document: &hash, model: "embedder", chunking: CHUNKING };
    let refused = |result: Result<Indexed, StoreError>| match result {
        Err(StoreError::InvalidInput(message)) => message,
        other => panic!("expected a refusal, got {other:?}"),
    };
    assert!(refused(store.index_document(key, &[]).await).contains("no passages"));
    let mut ragged = passages();
    ragged[2].vector.push(1.0);
    assert!(refused(store.index_document(key, &ragged).await).contains("one model"));
    let mut nan = passages();
    nan[1].vector[0] = f32::NAN;
    assert!(refused(store.index_document(key, &nan).await).contains("not a number"));
    let empty: Vec<NewPassage> = passages().into_iter().map(|p| NewPassage { vector: vec![], ..p }).collect();
    assert!(refused(store.index_document(key, &empty).await).contains("empty"));
    let mut repeated = passages();
    repeated[2].ordinal = 0;
    assert!(refused(store.index_document(key, &repeated).await).contains("ordinal"));
    assert!(refused(store.index_document(IndexKey { model: "", ..key }, &passages()).await).contains("model"));
    assert!(!store.document_indexed(key).await.unwrap(), "nothing was written");

    let unknown = AttachmentHash::parse(&"ab".repeat(32)).unwrap();
    let missing = store.index_document(IndexKey { document: &unknown, ..key }, &passages()).await;
    assert!(matches!(missing, Err(StoreError::NotFound { .. })), "{missing:?}");

    store.index_document(key, &passages()).await.unwrap();
    let docs = [hash];
    let wrong_length = store.search_passages(&query("x", Some(&[1.0, 0.0]), &docs, RetrievalMode::Vector)).await;
    assert!(matches!(&wrong_length, Err(StoreError::InvalidInput(m)) if m.contains("indexed with 3")), "{wrong_length:?}");
    let no_vector = store.search_passages(&query("x", None, &docs, RetrievalMode::Vector)).await;
    assert!(matches!(no_vector, Err(StoreError::InvalidInput(_))));
}

#[tokio::test]
async fn an_index_leaves_with_its_document() {
    let (store, _dir) = store().await;
    let chat = conversation(&store, "docs").await;
    let hash = document(&store, "a.md", "a").await;
    store.add_message_with_attachments(chat.id, None, Role::User, "read this", std::slice::from_ref(&hash)).await.unwrap();
    let key = IndexKey { document: &hash, model: "embedder", chunking: CHUNKING };
    store.index_document(key, &passages()).await.unwrap();
    assert_healthy(&store).await;
    store.delete_conversation(chat.id).await.unwrap();
    assert!(!store.document_indexed(key).await.unwrap());
    assert_healthy(&store).await;
    let left: i64 = {
        let reopened = Store::open(store.path()).await.unwrap();
        let docs = [hash.clone()];
        reopened.search_passages(&query("library", None, &docs, RetrievalMode::Text)).await.unwrap().len() as i64
    };
    assert_eq!(left, 0);
}
