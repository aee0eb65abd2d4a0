//! The models endpoints: `GET /v1/models` (every model a request may name, with whether it is
//! loaded), and loading and unloading by hand as LM Studio's REST API does it (`POST
//! /api/v1/models/load`, `POST /api/v1/models/unload`). Ollama's `keep_alive` and `/api/ps`
//! speak to the same pool.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::shared::body::parse;
use crate::shared::error::ApiError;
use crate::{KeepAlive, ListedModel, ServerState};

const LM_STUDIO_REFERENCE: &str = "LM Studio's REST API reference";

/// Every model this server can run, loaded ones first.
pub async fn list(State(state): State<Arc<ServerState>>) -> Response {
    let listing = state.clone();
    // Finding models walks folders on disk.
    let found = tokio::task::spawn_blocking(move || listing.source.models()).await;
    match found {
        Ok(models) => {
            let data: Vec<Value> = models.iter().map(|m| entry(m, state.started)).collect();
            Json(json!({ "object": "list", "data": data })).into_response()
        }
        Err(e) => ApiError::internal(format!("listing the models failed: {e}")).into_response(),
    }
}

/// OpenAI's model object, with what LM Studio's listing adds (`type`, `state`) and `loaded`.
fn entry(model: &ListedModel, created: u64) -> Value {
    let kind = if model.is_embedding() { "embeddings" } else { "llm" };
    let loaded = model.loaded.is_some();
    let weights = model.loaded.as_ref().map(|l| l.weights_bytes).or(model.found.as_ref().map(|f| f.weights_bytes));
    json!({
        "id": model.name,
        "object": "model",
        "created": created,
        "owned_by": "confab",
        "type": kind,
        "loaded": loaded,
        "state": if loaded { "loaded" } else { "not-loaded" },
        // What its weights take in memory: measured while loaded, else estimated from its files.
        "weights_bytes": weights,
    })
}

#[derive(Deserialize)]
pub struct LoadRequest {
    model: Option<String>,
}

#[derive(Deserialize)]
pub struct UnloadRequest {
    /// LM Studio names the loaded instance; here it is the model's name.
    instance_id: Option<String>,
    model: Option<String>,
}

/// Loads a model now (it then stays loaded until unloaded or its room is needed).
pub async fn load(State(state): State<Arc<ServerState>>, body: Result<Bytes, BytesRejection>) -> Response {
    let answer = async {
        let request: LoadRequest = parse(body, state.body_limit, LM_STUDIO_REFERENCE)?;
        let asked = request.model.ok_or_else(|| ApiError::invalid(Some("model"), "model is required: the name GET /v1/models lists."))?;
        let began = Instant::now();
        let model = state.acquire(&asked).await?;
        let (source, name) = (state.clone(), model.name.clone());
        tokio::task::spawn_blocking(move || source.source.keep_alive(&name, KeepAlive::Forever))
            .await
            .map_err(|e| ApiError::internal(format!("keeping the model loaded failed: {e}")))??;
        let kind = if model.info.embedding.is_some() { "embeddings" } else { "llm" };
        Ok::<_, ApiError>(
            Json(json!({
                "type": kind,
                "instance_id": model.name,
                "load_time_seconds": began.elapsed().as_secs_f64(),
                "status": "loaded",
            }))
            .into_response(),
        )
    };
    answer.await.unwrap_or_else(IntoResponse::into_response)
}

/// Unloads a model once the requests using it end.
pub async fn unload(State(state): State<Arc<ServerState>>, body: Result<Bytes, BytesRejection>) -> Response {
    let answer = async {
        let request: UnloadRequest = parse(body, state.body_limit, LM_STUDIO_REFERENCE)?;
        let asked = request.instance_id.or(request.model).ok_or_else(|| {
            ApiError::invalid(Some("instance_id"), "instance_id is required: the name of a loaded model (GET /v1/models).")
        })?;
        let source = state.clone();
        let name = asked.clone();
        tokio::task::spawn_blocking(move || source.source.keep_alive(&name, KeepAlive::Idle(std::time::Duration::ZERO)))
            .await
            .map_err(|e| ApiError::internal(format!("unloading the model failed: {e}")))??;
        Ok::<_, ApiError>(Json(json!({ "instance_id": asked })).into_response())
    };
    answer.await.unwrap_or_else(IntoResponse::into_response)
}
