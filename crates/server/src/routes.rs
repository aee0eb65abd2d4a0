//! The router: every endpoint and the API it belongs to, the access checks around them, and the
//! routing errors in OpenAI's shape (in Anthropic's on the Messages API's paths and Ollama's on
//! `/api/*`, see `messages::routes::error_for`). `GET /health` and `GET /` are answered here.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::{Body, HttpBody};
use axum::extract::{DefaultBodyLimit, Request as HttpRequest, State};
use axum::http::Uri;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

use crate::access;
use crate::messages::routes::error_for;
use crate::shared::error::{ApiError, Refusal};
use crate::ServerState;
use crate::{chat_completions, embeddings, messages, models, ollama, responses};

pub fn router(state: Arc<ServerState>) -> Router {
    let api = Router::new()
        .route("/v1/chat/completions", post(chat_completions::routes::chat))
        .route("/v1/completions", post(chat_completions::routes::completions))
        .route("/v1/embeddings", post(embeddings::create))
        .route("/v1/responses", post(responses::routes::create))
        .route("/v1/responses/input_tokens", post(responses::routes::input_tokens))
        .route("/v1/responses/{id}", get(responses::routes::retrieve).delete(responses::routes::delete))
        .route("/v1/responses/{id}/input_items", get(responses::routes::input_items))
        .route("/v1/messages", post(messages::routes::messages))
        .route("/v1/messages/count_tokens", post(messages::routes::count_tokens))
        .route("/v1/models", get(models::list))
        .route("/api/v1/models", get(models::list))
        .route("/api/v1/models/load", post(models::load))
        .route("/api/v1/models/unload", post(models::unload))
        .route("/api/chat", post(ollama::routes::chat))
        .route("/api/generate", post(ollama::routes::generate))
        .route("/api/embed", post(ollama::routes::embed))
        .route("/api/embeddings", post(ollama::routes::embeddings))
        .route("/api/tags", get(ollama::routes::tags))
        .route("/api/ps", get(ollama::routes::ps))
        .route("/api/show", post(ollama::routes::show))
        .route("/api/version", get(ollama::routes::version))
        .route("/api/pull", post(ollama::routes::pull))
        .route_layer(middleware::from_fn_with_state(state.clone(), access::admit));
    Router::new()
        .route("/health", get(health))
        .route("/", get(root))
        .merge(api)
        .fallback(|uri: Uri| async move { error_for(uri.path(), ApiError::not_found(uri.path())) })
        .method_not_allowed_fallback(|uri: Uri| async move { error_for(uri.path(), ApiError::method_not_allowed()) })
        .layer(DefaultBodyLimit::max(state.body_limit))
        .layer(middleware::from_fn_with_state(state.clone(), access::check_caller))
        .layer(middleware::from_fn(log_request))
        .with_state(state)
}

/// A log line per HTTP request; a streamed reply's time is until its headers (the engine's
/// own `done` line, in the request's span, has the rest). A refused request's line says why,
/// as a warning, so that it shows at any log level a user runs with.
async fn log_request(request: HttpRequest, next: Next) -> Response {
    let (method, path) = (request.method().clone(), request.uri().path().to_string());
    let began = std::time::Instant::now();
    let response = next.run(request).await;
    let (status, ms) = (response.status().as_u16(), began.elapsed().as_millis() as u64);
    if !response.status().is_client_error() {
        tracing::info!(%method, path, status, ms, "http");
        return response;
    }
    let (response, reason) = match response.extensions().get::<Refusal>() {
        Some(Refusal(reason)) => {
            let reason = reason.clone();
            (response, reason)
        }
        None => reason_in_body(response).await,
    };
    tracing::warn!(%method, path, status, ms, reason, "http refused");
    response
}

/// What answers at the root: clients of Ollama's API probe it to see that a server is up.
async fn root() -> &'static str {
    "Confab is running: OpenAI's and Anthropic's APIs at /v1, Ollama's at /api."
}

/// The reason of a refusal answered without one attached (the rejections of axum's own
/// extractors, a route that answers a bare status): its body's error message or text, read
/// where the body is small and whole, and put back.
async fn reason_in_body(response: Response) -> (Response, String) {
    const MOST: u64 = 64 << 10;
    let unnamed = response.status().canonical_reason().unwrap_or("refused").to_string();
    if response.body().size_hint().upper().is_none_or(|size| size > MOST) {
        return (response, unnamed);
    }
    let (parts, body) = response.into_parts();
    // Within its size hint, so it is read whole.
    let bytes = axum::body::to_bytes(body, MOST as usize).await.unwrap_or_default();
    // OpenAI's and Anthropic's `error.message`, or a bare `error` string (Ollama's shape).
    let message = serde_json::from_slice::<Value>(&bytes)
        .ok()
        .and_then(|body| body.pointer("/error/message").or_else(|| body.get("error")).and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| String::from_utf8_lossy(&bytes).trim().to_string());
    let reason = if message.is_empty() { unnamed } else { message };
    (Response::from_parts(parts, Body::from(bytes)), reason)
}

async fn health(State(state): State<Arc<ServerState>>) -> Json<Value> {
    // The loaded models only: finding the others walks folders on disk.
    let loaded: Vec<String> = state.source.loaded().into_iter().map(|m| m.name).collect();
    Json(json!({ "status": "ok", "model": loaded.first(), "loaded": loaded, "active_requests": state.active.load(Ordering::Relaxed) }))
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;
    use axum::response::IntoResponse;

    use super::*;

    fn reason_of(response: Response) -> (String, String) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(async {
            let (response, reason) = reason_in_body(response).await;
            let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
            (reason, String::from_utf8(body.to_vec()).unwrap())
        })
    }

    #[test]
    fn a_refusal_without_a_reason_attached_is_named_by_its_body_which_still_goes_out() {
        // An extractor's rejection: plain text.
        let (reason, body) = reason_of((StatusCode::BAD_REQUEST, "Invalid URL: Invalid UTF-8 in `id`").into_response());
        assert_eq!((reason.as_str(), body.as_str()), ("Invalid URL: Invalid UTF-8 in `id`", "Invalid URL: Invalid UTF-8 in `id`"));
        // An error in OpenAI's or Anthropic's shape: its message.
        let shaped = json!({"type": "error", "error": {"type": "invalid_request_error", "message": "model is required"}});
        let (reason, body) = reason_of((StatusCode::BAD_REQUEST, Json(shaped.clone())).into_response());
        assert_eq!(reason, "model is required");
        assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), shaped);
        let (reason, _) = reason_of((StatusCode::NOT_FOUND, Json(json!({"error": "model 'x' not found"}))).into_response());
        assert_eq!(reason, "model 'x' not found");
        // A bare status: its name.
        assert_eq!(reason_of(StatusCode::UNSUPPORTED_MEDIA_TYPE.into_response()).0, "Unsupported Media Type");
    }
}
