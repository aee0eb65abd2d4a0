//! A request's body as JSON, with a too-large or malformed body as an error (each endpoint
//! answers it in its own API's shape).

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use serde::de::DeserializeOwned;

use super::error::ApiError;

pub(crate) const OPENAI_REFERENCE: &str = "OpenAI's API reference";

/// `reference` names where the fields are documented.
pub(crate) fn parse<T: DeserializeOwned>(body: Result<Bytes, BytesRejection>, limit: usize, reference: &str) -> Result<T, ApiError> {
    let bytes = body.map_err(|rejection| match rejection.status() {
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::body_too_large(limit),
        _ => ApiError::invalid(None, format!("The request body could not be read ({}).", rejection.body_text())),
    })?;
    parse_bytes(&bytes, reference)
}

/// A body already read, as JSON (serde_json's nesting limit holds: a body of 100k `[` is an
/// error, not a stack overflow).
pub(crate) fn parse_bytes<T: DeserializeOwned>(bytes: &[u8], reference: &str) -> Result<T, ApiError> {
    serde_json::from_slice(bytes).map_err(|e| {
        ApiError::invalid(None, format!("The request body is not valid JSON for this endpoint ({e}). See {reference} for the fields."))
    })
}
