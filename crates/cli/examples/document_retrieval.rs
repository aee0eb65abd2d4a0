//! Retrieval over a document set, as the app does it: each document read, cut into passages
//! (`confab_documents::chunk_document`), embedded by an embedding model, indexed in a real
//! SQLite file (`Store::index_document`), then each question embedded and searched by vector,
//! by words and hybrid (`Store::search_passages`). Prints one JSON object: recall@k of each mode
//! (a question is answered when a passage of its document among the first k holds its answer
//! phrase), indexing speed and query latency. bench/documents.py runs it.
//!
//!     cargo run --release -p confab-cli --example document_retrieval -- \
//!         --model target/bench/smollm2-embedder --set tests/reference/fixtures/retrieval
//!
//! Without --model, only word search is measured (vectors are not made).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use clap::Parser;
use confab_documents::{chunk_document, read_document_file, ChunkSettings};
use confab_engine::model::embedding::EmbedPrompt;
use confab_engine::model::LoadOptions;
use confab_engine::runtime::{Engine, EngineOptions};
use confab_store::{AttachmentHash, AttachmentMeta, IndexKey, NewPassage, PassageQuery, RetrievalMode, Store, RRF_K};

#[derive(Parser)]
struct Args {
    /// The embedding model's folder (sentence-transformers layout).
    #[arg(long)]
    model: Option<PathBuf>,
    /// A folder of documents with questions.json ([{question, document, answer}]).
    #[arg(long)]
    set: PathBuf,
    #[arg(long, default_value_t = 5)]
    k: usize,
    #[arg(long, default_value_t = ChunkSettings::default().target_tokens)]
    target_tokens: usize,
    #[arg(long, default_value_t = ChunkSettings::default().overlap_tokens)]
    overlap_tokens: usize,
    /// Also write the passages and questions with their vectors, as JSON to this file: the
    /// reference side of bench/documents.py embeds the same texts and compares.
    #[arg(long)]
    dump_passages: Option<PathBuf>,
}

#[derive(serde::Deserialize)]
struct Question {
    question: String,
    document: String,
    answer: String,
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let settings = ChunkSettings { target_tokens: args.target_tokens, overlap_tokens: args.overlap_tokens };
    let questions: Vec<Question> = serde_json::from_str(&std::fs::read_to_string(args.set.join("questions.json"))?)?;
    let engine = Engine::start(EngineOptions::default())?;
    let model = match &args.model {
        Some(path) => {
            let (id, info) = engine.load(path, LoadOptions::default(), |_| {}).with_context(|| format!("loading {}", path.display()))?;
            anyhow::ensure!(info.embedding.is_some(), "{} is not an embedding model", path.display());
            Some(id)
        }
        None => None,
    };
    let model_name = args.model.as_deref().map_or("none".to_string(), |p| p.display().to_string());
    let embed = |texts: Vec<String>, prompt: EmbedPrompt| -> anyhow::Result<Vec<Vec<f32>>> {
        match model {
            Some(id) => Ok(engine.embed(id, texts, prompt)?.vectors),
            // Word search only: a placeholder vector per passage.
            None => Ok(texts.iter().map(|_| vec![1.0]).collect()),
        }
    };

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let dir = tempfile::tempdir()?;
    let store = runtime.block_on(Store::open(dir.path().join("confab.db")))?;
    let chunking = settings.key();

    let mut names: Vec<PathBuf> = std::fs::read_dir(&args.set)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().is_some_and(|n| n != "questions.json"))
        .collect();
    names.sort();
    let mut documents: Vec<(String, AttachmentHash)> = Vec::new();
    let mut dumped = Vec::new();
    let (mut pages, mut pdf_seconds, mut passages_total, mut chars_total, mut index_seconds) = (0u32, 0.0, 0usize, 0usize, 0.0);
    for path in &names {
        let name = file_name(path);
        let started = Instant::now();
        let document = read_document_file(path).map_err(|e| anyhow::anyhow!("{e}"))?;
        let passages = chunk_document(&document, &settings);
        let vectors = embed(passages.iter().map(|p| p.text.clone()).collect(), EmbedPrompt::Document)?;
        dumped.extend(passages.iter().zip(&vectors).map(|(p, v)| serde_json::json!({ "document": name, "text": p.text, "vector": v })));
        let bytes = std::fs::read(path)?;
        let meta = AttachmentMeta { mime: "text/plain".into(), original_name: Some(name.clone()), ..Default::default() };
        let hash = runtime.block_on(store.add_attachment_bytes(bytes, &meta))?;
        let new: Vec<NewPassage> = passages
            .iter()
            .zip(vectors)
            .map(|(p, vector)| NewPassage {
                ordinal: p.ordinal,
                page: p.page,
                section: p.section as u32,
                span: p.span.start as u32..p.span.end as u32,
                headings: p.headings.clone(),
                text: p.text.clone(),
                vector,
            })
            .collect();
        runtime.block_on(store.index_document(IndexKey { document: &hash, model: &model_name, chunking: &chunking }, &new))?;
        let seconds = started.elapsed().as_secs_f64();
        index_seconds += seconds;
        if let Some(n) = document.page_count() {
            pages += n;
            pdf_seconds += seconds;
        }
        passages_total += passages.len();
        chars_total += document.text().chars().count();
        documents.push((name, hash));
    }
    let hashes: Vec<AttachmentHash> = documents.iter().map(|(_, h)| h.clone()).collect();

    let modes = [("vector", RetrievalMode::Vector), ("text", RetrievalMode::Text), ("hybrid", RetrievalMode::Hybrid)];
    let mut found = [0usize; 3];
    let (mut embed_ms, mut search_ms) = (Vec::new(), Vec::new());
    let mut per_question = Vec::new();
    let mut question_vectors = Vec::new();
    for q in &questions {
        let started = Instant::now();
        let vector = embed(vec![q.question.clone()], EmbedPrompt::Query)?.remove(0);
        embed_ms.push(started.elapsed().as_secs_f64() * 1e3);
        question_vectors.push(serde_json::json!({ "question": q.question, "vector": vector }));
        let hash = &documents.iter().find(|(n, _)| *n == q.document).with_context(|| format!("no document {}", q.document))?.1;
        let answer = collapse(&q.answer);
        let mut ranks = serde_json::Map::new();
        for (i, (label, mode)) in modes.iter().enumerate() {
            if model.is_none() && *mode != RetrievalMode::Text {
                continue;
            }
            let query = PassageQuery {
                text: &q.question,
                vector: Some(&vector),
                model: &model_name,
                chunking: &chunking,
                documents: &hashes,
                k: args.k,
                mode: *mode,
                rrf_k: RRF_K,
            };
            let started = Instant::now();
            let hits = runtime.block_on(store.search_passages(&query))?;
            if *mode == RetrievalMode::Hybrid {
                search_ms.push(started.elapsed().as_secs_f64() * 1e3);
            }
            let rank = hits.iter().position(|h| &h.document == hash && collapse(&h.text).contains(&answer)).map(|r| r + 1);
            if rank.is_some() {
                found[i] += 1;
            }
            ranks.insert((*label).into(), serde_json::json!(rank));
        }
        per_question.push(serde_json::json!({ "question": q.question, "ranks": ranks }));
    }
    if let Some(path) = &args.dump_passages {
        std::fs::write(path, serde_json::json!({ "passages": dumped, "questions": question_vectors }).to_string())?;
    }
    let n = questions.len() as f64;
    let recall = |i: usize| if model.is_none() && i != 1 { serde_json::Value::Null } else { serde_json::json!(found[i] as f64 / n) };
    let out = serde_json::json!({
        "model": model_name,
        "chunking": chunking,
        "k": args.k,
        "questions": questions.len(),
        "documents": documents.len(),
        "recall": { "vector": recall(0), "text": recall(1), "hybrid": recall(2) },
        "index": {
            "passages": passages_total,
            "characters": chars_total,
            "seconds": index_seconds,
            "passages_per_s": passages_total as f64 / index_seconds,
            "pdf_pages": pages,
            "pdf_seconds": pdf_seconds,
            "pdf_pages_per_s": if pdf_seconds > 0.0 { pages as f64 / pdf_seconds } else { f64::NAN },
        },
        "query_ms": { "embed_median": median(embed_ms), "hybrid_search_median": median(search_ms) },
        "per_question": per_question,
    });
    println!("{out}");
    Ok(())
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}
