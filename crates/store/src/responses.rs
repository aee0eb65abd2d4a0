//! Responses the local server kept (OpenAI's Responses API with `store: true`): each with the
//! request's own input items and the response object, linked to the one it continued.
//! The store keeps them as JSON and does not read inside; the server gives them meaning.

use serde_json::Value;

use crate::db::{now_ms, Store};
use crate::error::{Result, StoreError};

/// One kept response.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredResponse {
    /// `resp_…`, as the server answered it.
    pub id: String,
    /// The response this one continued (`previous_response_id`).
    pub previous_id: Option<String>,
    /// Unix milliseconds; set by [`Store::save_response`].
    pub created_at: i64,
    /// The request's own input items (a JSON array).
    pub input: Value,
    /// The response object as answered.
    pub response: Value,
}

/// The longest chain [`Store::response_chain`] follows: far more turns than any context holds.
pub const MAX_CHAIN: i64 = 10_000;

impl Store {
    /// Keeps a response (replacing one with the same id).
    pub async fn save_response(&self, response: &StoredResponse) -> Result<()> {
        if response.id.is_empty() {
            return Err(StoreError::InvalidInput("a stored response needs an id".into()));
        }
        sqlx::query("INSERT OR REPLACE INTO responses (id, previous_id, created_at, input, response) VALUES (?1, ?2, ?3, ?4, ?5)")
            .bind(&response.id)
            .bind(&response.previous_id)
            .bind(now_ms())
            .bind(response.input.to_string())
            .bind(response.response.to_string())
            .execute(&self.writer)
            .await?;
        Ok(())
    }

    /// The response kept under `id`; `NotFound` when there is none.
    pub async fn response(&self, id: &str) -> Result<StoredResponse> {
        let row: Option<Row> = sqlx::query_as("SELECT id, previous_id, created_at, input, response FROM responses WHERE id = ?1")
            .bind(id)
            .fetch_optional(&self.reader)
            .await?;
        row.map(parse_row).transpose()?.ok_or_else(|| not_found(id))
    }

    /// The response under `id` and every one it continued, oldest first. A chain whose oldest
    /// link still names a previous response lost that one (deleted): the caller decides.
    pub async fn response_chain(&self, id: &str) -> Result<Vec<StoredResponse>> {
        let rows: Vec<Row> = sqlx::query_as(
            "WITH RECURSIVE chain (id, previous_id, created_at, input, response, depth) AS (
                 SELECT id, previous_id, created_at, input, response, 0 FROM responses WHERE id = ?1
                 UNION ALL
                 SELECT r.id, r.previous_id, r.created_at, r.input, r.response, chain.depth + 1
                 FROM responses r JOIN chain ON r.id = chain.previous_id
                 WHERE chain.depth < ?2
             )
             SELECT id, previous_id, created_at, input, response FROM chain ORDER BY depth DESC",
        )
        .bind(id)
        .bind(MAX_CHAIN)
        .fetch_all(&self.reader)
        .await?;
        if rows.is_empty() {
            return Err(not_found(id));
        }
        rows.into_iter().map(parse_row).collect()
    }

    /// Removes the response under `id`; returns whether it was there.
    pub async fn delete_response(&self, id: &str) -> Result<bool> {
        let done = sqlx::query("DELETE FROM responses WHERE id = ?1").bind(id).execute(&self.writer).await?;
        Ok(done.rows_affected() > 0)
    }
}

type Row = (String, Option<String>, i64, String, String);

fn parse_row((id, previous_id, created_at, input, response): Row) -> Result<StoredResponse> {
    let json = |text: &str| {
        serde_json::from_str(text).map_err(|e| StoreError::InvalidInput(format!("stored response {id} is not valid JSON: {e}")))
    };
    Ok(StoredResponse { input: json(&input)?, response: json(&response)?, id, previous_id, created_at })
}

fn not_found(id: &str) -> StoreError {
    StoreError::NotFound { what: "response", id: id.to_string() }
}
