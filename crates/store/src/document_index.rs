//! The search index of attached documents: passages with their embeddings and an FTS5 index
//! over their text, in the chat's own SQLite file (schema 5).
//!
//! An index is keyed by the document's hash, the embedding model and the chunking (its
//! settings' key): indexing a document again under the same key does nothing, and a caller asks
//! [`Store::document_indexed`] first to skip embedding it at all; another model or chunking makes
//! another index. The store knows no model: vectors come in from the caller, the question's too.
//!
//! Search ranks passages three ways: by the cosine of their vector with the question's
//! (brute force in Rust over the chosen documents' passages: a few thousand vectors of a few
//! hundred floats are scanned in about a millisecond, well under the cost of embedding the
//! question, so no approximate index is worth its complexity here), by FTS5's bm25 over the
//! question's words, or both fused by reciprocal rank (each list gives a passage 1 / (k + rank),
//! k = 60 as in Cormack et al. 2009).

use std::collections::HashMap;

use sqlx::Row;

use crate::attachments::AttachmentHash;
use crate::db::{now_ms, Store};
use crate::error::{Result, StoreError};
use crate::search::fts_any_word;

/// Reciprocal rank fusion's constant: larger values flatten the difference between ranks.
pub const RRF_K: u32 = 60;

/// How deep each ranking goes before fusion: a passage ranked below this in both is not found.
const FUSION_DEPTH: usize = 200;

/// Most passages one search returns; bigger `k` is clamped to it.
pub const MAX_PASSAGE_HITS: usize = 200;

/// Which document index: a document, as cut by one chunking and embedded by one model.
#[derive(Clone, Copy, Debug)]
pub struct IndexKey<'a> {
    pub document: &'a AttachmentHash,
    /// The embedding model's id.
    pub model: &'a str,
    /// The chunking's key (`confab_documents::ChunkSettings::key`).
    pub chunking: &'a str,
}

/// A passage to index, with its embedding.
#[derive(Clone, Debug, PartialEq)]
pub struct NewPassage {
    /// 0, 1, … in reading order (unique within the document).
    pub ordinal: u32,
    /// The 1-based page, for formats that have pages.
    pub page: Option<u32>,
    /// The document section it is in, and its byte offsets in that section's text.
    pub section: u32,
    pub span: std::ops::Range<u32>,
    /// The headings it is under, outermost first.
    pub headings: Vec<String>,
    pub text: String,
    /// The embedding; every passage of an index has the same dimension.
    pub vector: Vec<f32>,
}

/// What [`Store::index_document`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Indexed {
    /// The index was made now, with this many passages.
    Made { passages: usize },
    /// It existed already (same document, model and chunking); nothing was written.
    AlreadyThere,
}

/// How passages are ranked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RetrievalMode {
    /// Cosine similarity of the embeddings alone.
    Vector,
    /// FTS5's bm25 over the question's words alone.
    Text,
    /// Both, fused by reciprocal rank.
    #[default]
    Hybrid,
}

/// A search over the indexes of some documents.
#[derive(Clone, Copy, Debug)]
pub struct PassageQuery<'a> {
    /// The question as the person typed it (any text: it is never read as FTS5 syntax).
    pub text: &'a str,
    /// The question's embedding by `model` (needed by `Vector` and `Hybrid`; `Hybrid` without
    /// it ranks by words alone).
    pub vector: Option<&'a [f32]>,
    pub model: &'a str,
    pub chunking: &'a str,
    /// The documents to search; their indexes under `model` and `chunking` are used (a document
    /// without one is not searched: index it first).
    pub documents: &'a [AttachmentHash],
    /// How many passages to return (at most [`MAX_PASSAGE_HITS`]).
    pub k: usize,
    pub mode: RetrievalMode,
    /// Reciprocal rank fusion's constant ([`RRF_K`] unless there is a reason).
    pub rrf_k: u32,
}

/// A passage found, best first.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PassageHit {
    pub document: AttachmentHash,
    /// The name the document was attached with.
    pub document_name: Option<String>,
    pub ordinal: u32,
    pub page: Option<u32>,
    pub section: u32,
    pub span: std::ops::Range<u32>,
    pub headings: Vec<String>,
    pub text: String,
    /// The score it was ranked by: cosine similarity (`Vector`), bm25 negated so higher is
    /// better (`Text`), or the fused reciprocal ranks (`Hybrid`).
    pub score: f64,
    /// Its 1-based rank by vector and by words, where it was ranked (within the fusion depth).
    pub vector_rank: Option<u32>,
    pub text_rank: Option<u32>,
}

impl Store {
    /// Whether the document has an index under this model and chunking (then embedding its
    /// passages again is wasted work).
    pub async fn document_indexed(&self, key: IndexKey<'_>) -> Result<bool> {
        let found: Option<i64> = sqlx::query_scalar("SELECT id FROM document_indexes WHERE hash = ?1 AND model = ?2 AND chunking = ?3")
            .bind(key.document.as_str())
            .bind(key.model)
            .bind(key.chunking)
            .fetch_optional(&self.reader)
            .await?;
        Ok(found.is_some())
    }

    /// Stores the document's passages and their vectors under `key`, in one transaction; does
    /// nothing if that index exists. The document must be a stored attachment (its index goes
    /// when it does). Refused with `InvalidInput`: no passages, vectors of different or zero
    /// length, a value that is not finite, a repeated ordinal, an empty model or chunking.
    pub async fn index_document(&self, key: IndexKey<'_>, passages: &[NewPassage]) -> Result<Indexed> {
        let dimension = check_passages(key, passages)?;
        let mut tx = self.begin_write().await?;
        let existing: Option<i64> = sqlx::query_scalar("SELECT id FROM document_indexes WHERE hash = ?1 AND model = ?2 AND chunking = ?3")
            .bind(key.document.as_str())
            .bind(key.model)
            .bind(key.chunking)
            .fetch_optional(&mut *tx)
            .await?;
        if existing.is_some() {
            return Ok(Indexed::AlreadyThere);
        }
        let attached: Option<i64> =
            sqlx::query_scalar("SELECT 1 FROM attachments WHERE hash = ?1").bind(key.document.as_str()).fetch_optional(&mut *tx).await?;
        if attached.is_none() {
            return Err(StoreError::NotFound { what: "attachment", id: key.document.to_string() });
        }
        let index_id: i64 = sqlx::query_scalar(
            "INSERT INTO document_indexes (hash, model, chunking, dimension, created_at) VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id",
        )
        .bind(key.document.as_str())
        .bind(key.model)
        .bind(key.chunking)
        .bind(dimension as i64)
        .bind(now_ms())
        .fetch_one(&mut *tx)
        .await?;
        for passage in passages {
            sqlx::query(
                "INSERT INTO document_passages (index_id, ordinal, page, section, span_start, span_end, headings, text, vector)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )
            .bind(index_id)
            .bind(i64::from(passage.ordinal))
            .bind(passage.page.map(i64::from))
            .bind(i64::from(passage.section))
            .bind(i64::from(passage.span.start))
            .bind(i64::from(passage.span.end))
            .bind(serde_json::to_string(&passage.headings).map_err(|e| StoreError::InvalidInput(e.to_string()))?)
            .bind(&passage.text)
            .bind(vector_bytes(&passage.vector))
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        tracing::debug!(document = %key.document, model = key.model, chunking = key.chunking, passages = passages.len(), "document indexed");
        Ok(Indexed::Made { passages: passages.len() })
    }

    /// Deletes the indexes made by any other model or chunking than these (after the embedding
    /// model changed, the old vectors are dead weight). Returns how many indexes went.
    pub async fn remove_other_document_indexes(&self, model: &str, chunking: &str) -> Result<u64> {
        let done = sqlx::query("DELETE FROM document_indexes WHERE model <> ?1 OR chunking <> ?2")
            .bind(model)
            .bind(chunking)
            .execute(&self.writer)
            .await?;
        Ok(done.rows_affected())
    }

    /// The best `query.k` passages of the query's documents, best first. A question with no
    /// searchable word finds nothing by words; a `Vector` search without a vector, or with one
    /// of another length than the index's, is refused with `InvalidInput`.
    pub async fn search_passages(&self, query: &PassageQuery<'_>) -> Result<Vec<PassageHit>> {
        let k = query.k.min(MAX_PASSAGE_HITS);
        if k == 0 || query.documents.is_empty() {
            return Ok(Vec::new());
        }
        if query.mode == RetrievalMode::Vector && query.vector.is_none() {
            return Err(StoreError::InvalidInput("a vector search needs the question's embedding".into()));
        }
        let indexes = self.indexes_of(query).await?;
        if indexes.is_empty() {
            return Ok(Vec::new());
        }
        let by_vector = match (query.mode, query.vector) {
            (RetrievalMode::Vector | RetrievalMode::Hybrid, Some(vector)) => self.rank_by_vector(&indexes, vector).await?,
            _ => Vec::new(),
        };
        let by_text = match query.mode {
            RetrievalMode::Text | RetrievalMode::Hybrid => self.rank_by_text(&indexes, query.text).await?,
            RetrievalMode::Vector => Vec::new(),
        };
        let ranked: Vec<(i64, f64)> = match query.mode {
            RetrievalMode::Vector => by_vector.iter().take(k).copied().collect(),
            RetrievalMode::Text => by_text.iter().take(k).copied().collect(),
            RetrievalMode::Hybrid => fuse(&[&by_vector, &by_text], query.rrf_k).into_iter().take(k).collect(),
        };
        let rank_of = |list: &[(i64, f64)], id: i64| list.iter().take(FUSION_DEPTH).position(|&(p, _)| p == id).map(|r| r as u32 + 1);
        let mut hits = Vec::with_capacity(ranked.len());
        for (id, score) in ranked {
            let mut hit = self.passage(id).await?;
            hit.score = score;
            hit.vector_rank = rank_of(&by_vector, id);
            hit.text_rank = rank_of(&by_text, id);
            hits.push(hit);
        }
        Ok(hits)
    }

    /// The ids and dimensions of the query's documents' indexes.
    async fn indexes_of(&self, query: &PassageQuery<'_>) -> Result<Vec<(i64, usize)>> {
        let hashes = serde_json::to_string(&query.documents).map_err(|e| StoreError::InvalidInput(e.to_string()))?;
        let rows: Vec<(i64, i64)> = sqlx::query_as(
            "SELECT id, dimension FROM document_indexes
             WHERE model = ?1 AND chunking = ?2 AND hash IN (SELECT value FROM json_each(?3))",
        )
        .bind(query.model)
        .bind(query.chunking)
        .bind(hashes)
        .fetch_all(&self.reader)
        .await?;
        Ok(rows.into_iter().map(|(id, dimension)| (id, dimension as usize)).collect())
    }

    /// Every passage of the indexes by cosine similarity with `vector`, best first.
    async fn rank_by_vector(&self, indexes: &[(i64, usize)], vector: &[f32]) -> Result<Vec<(i64, f64)>> {
        if let Some(&(_, dimension)) = indexes.iter().find(|(_, d)| *d != vector.len()) {
            return Err(StoreError::InvalidInput(format!(
                "the question's embedding has {} values but the documents were indexed with {dimension}; \
                 embed the question with the model that indexed them",
                vector.len()
            )));
        }
        let query = normalized(vector.iter().map(|&v| f64::from(v)).collect());
        let mut scored = Vec::new();
        for &(index, dimension) in indexes {
            let rows: Vec<(i64, Vec<u8>)> =
                sqlx::query_as("SELECT id, vector FROM document_passages WHERE index_id = ?1").bind(index).fetch_all(&self.reader).await?;
            for (id, bytes) in rows {
                if bytes.len() != dimension * 4 {
                    return Err(StoreError::InvalidInput(format!("passage {id} has a damaged vector ({} bytes)", bytes.len())));
                }
                scored.push((id, cosine(&query, &bytes)));
            }
        }
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(scored)
    }

    /// The passages of the indexes matching any word of `question`, best bm25 first (scores
    /// negated: higher is better).
    async fn rank_by_text(&self, indexes: &[(i64, usize)], question: &str) -> Result<Vec<(i64, f64)>> {
        let Some(fts) = fts_any_word(question) else {
            return Ok(Vec::new());
        };
        let ids = serde_json::to_string(&indexes.iter().map(|(id, _)| id).collect::<Vec<_>>())
            .map_err(|e| StoreError::InvalidInput(e.to_string()))?;
        let rows: Vec<(i64, f64)> = sqlx::query_as(
            "SELECT p.id, -bm25(document_passages_fts) AS score
             FROM document_passages_fts JOIN document_passages p ON p.id = document_passages_fts.rowid
             WHERE document_passages_fts MATCH ?1 AND p.index_id IN (SELECT value FROM json_each(?2))
             ORDER BY rank, p.id LIMIT ?3",
        )
        .bind(fts)
        .bind(ids)
        .bind(FUSION_DEPTH as i64)
        .fetch_all(&self.reader)
        .await?;
        Ok(rows)
    }

    async fn passage(&self, id: i64) -> Result<PassageHit> {
        let row = sqlx::query(
            "SELECT i.hash, a.original_name, p.ordinal, p.page, p.section, p.span_start, p.span_end, p.headings, p.text
             FROM document_passages p JOIN document_indexes i ON i.id = p.index_id JOIN attachments a ON a.hash = i.hash
             WHERE p.id = ?1",
        )
        .bind(id)
        .fetch_optional(&self.reader)
        .await?
        .ok_or_else(|| StoreError::NotFound { what: "passage", id: id.to_string() })?;
        let hash: String = row.try_get("hash")?;
        let headings: String = row.try_get("headings")?;
        let number = |column: &str| -> Result<u32> {
            let value: i64 = row.try_get(column)?;
            u32::try_from(value).map_err(|_| StoreError::InvalidInput(format!("passage {id}: {column} {value} is out of range")))
        };
        let page: Option<i64> = row.try_get("page")?;
        Ok(PassageHit {
            document: AttachmentHash::parse(&hash)?,
            document_name: row.try_get("original_name")?,
            ordinal: number("ordinal")?,
            page: page.and_then(|p| u32::try_from(p).ok()),
            section: number("section")?,
            span: number("span_start")?..number("span_end")?,
            headings: serde_json::from_str(&headings).unwrap_or_default(),
            text: row.try_get("text")?,
            score: 0.0,
            vector_rank: None,
            text_rank: None,
        })
    }
}

/// Reciprocal rank fusion: each ranking gives a passage 1 / (k + rank), rank from 1; ties keep
/// the smaller id first, so the order is deterministic.
fn fuse(rankings: &[&[(i64, f64)]], k: u32) -> Vec<(i64, f64)> {
    let mut scores: HashMap<i64, f64> = HashMap::new();
    for ranking in rankings {
        for (rank, &(id, _)) in ranking.iter().take(FUSION_DEPTH).enumerate() {
            *scores.entry(id).or_default() += 1.0 / (f64::from(k) + rank as f64 + 1.0);
        }
    }
    let mut fused: Vec<(i64, f64)> = scores.into_iter().collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fused
}

/// The dimension shared by every passage's vector, or why the passages are refused.
fn check_passages(key: IndexKey<'_>, passages: &[NewPassage]) -> Result<usize> {
    let invalid = |message: String| Err(StoreError::InvalidInput(message));
    if key.model.is_empty() || key.chunking.is_empty() {
        return invalid("a document index needs the embedding model's id and the chunking's key".into());
    }
    let Some(first) = passages.first() else {
        return invalid(format!("document {} has no passages to index (it has no text)", key.document));
    };
    let dimension = first.vector.len();
    if dimension == 0 {
        return invalid("the passages' embeddings are empty; check the embedding model".into());
    }
    let mut ordinals = std::collections::HashSet::new();
    for passage in passages {
        if passage.vector.len() != dimension {
            return invalid(format!(
                "passage {} has an embedding of {} values where the first has {dimension}; embed every passage with one model",
                passage.ordinal,
                passage.vector.len()
            ));
        }
        if passage.vector.iter().any(|v| !v.is_finite()) {
            return invalid(format!("passage {}'s embedding has a value that is not a number; check the embedding model", passage.ordinal));
        }
        if !ordinals.insert(passage.ordinal) {
            return invalid(format!("two passages have the ordinal {}", passage.ordinal));
        }
        if passage.span.start > passage.span.end {
            return invalid(format!("passage {}'s span ends before it starts", passage.ordinal));
        }
    }
    Ok(dimension)
}

/// A vector as its BLOB: little-endian f32s.
fn vector_bytes(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn normalized(mut vector: Vec<f64>) -> Vec<f64> {
    let norm = vector.iter().map(|v| v * v).sum::<f64>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|v| *v /= norm);
    }
    vector
}

/// Cosine of a unit vector with a stored one (0 for a zero vector).
fn cosine(unit: &[f64], bytes: &[u8]) -> f64 {
    let (mut dot, mut norm) = (0.0, 0.0);
    for (u, chunk) in unit.iter().zip(bytes.chunks_exact(4)) {
        let v = f64::from(f32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]));
        dot += u * v;
        norm += v * v;
    }
    if norm > 0.0 {
        dot / norm.sqrt()
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusion_adds_reciprocal_ranks() {
        let a = [(1, 0.9), (2, 0.8), (3, 0.1)];
        let b = [(2, 5.0), (3, 4.0)];
        let fused = fuse(&[&a, &b], 60);
        // In both lists beats first in one: 1/62 + 1/61, then 1/63 + 1/62, then 1/61.
        assert_eq!(fused.iter().map(|(id, _)| *id).collect::<Vec<_>>(), [2, 3, 1]);
        assert!((fused[0].1 - (1.0 / 62.0 + 1.0 / 61.0)).abs() < 1e-12);
    }

    #[test]
    fn vectors_are_little_endian_and_cosines_ignore_length() {
        assert_eq!(vector_bytes(&[1.0]), [0, 0, 0x80, 0x3f]);
        let unit = normalized(vec![3.0, 4.0]);
        assert!((cosine(&unit, &vector_bytes(&[6.0, 8.0])) - 1.0).abs() < 1e-9);
        assert!((cosine(&unit, &vector_bytes(&[-4.0, 3.0]))).abs() < 1e-9);
        assert_eq!(cosine(&unit, &vector_bytes(&[0.0, 0.0])), 0.0);
    }
}
