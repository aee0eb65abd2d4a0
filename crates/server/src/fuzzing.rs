//! Entry points for the fuzz targets (`crates/fuzz`), not an API: each door's request body from
//! bytes through the handler's own parse and translation into the engine's request, stopping
//! where a loaded model would be needed (the model's facts come from the caller). Every function
//! here only strings the handlers' own steps together, in the handlers' order.

use confab_engine::Request;

use crate::shared::body::parse_bytes;
use crate::shared::error::ApiError;
use crate::ServedModel;

/// `POST /v1/chat/completions`.
pub fn chat_completions(body: &[u8], model: &ServedModel) -> Result<Request, ApiError> {
    let request: crate::chat_completions::request::ChatRequest = parse_bytes(body, "")?;
    let _ = request.sampling.include_usage();
    Ok(crate::chat_completions::routes::chat_request(&request, model)?.1)
}

/// `POST /v1/completions`.
pub fn completions(body: &[u8], model: &ServedModel) -> Result<Request, ApiError> {
    let request: crate::chat_completions::request::CompletionRequest = parse_bytes(body, "")?;
    crate::chat_completions::routes::completion_request(&request, model)
}

/// `POST /v1/responses`, then `POST /v1/responses/input_tokens` on the same body (a request that
/// continues no earlier response: those come from the server's own store).
pub fn responses(body: &[u8], model: &ServedModel) -> Result<Request, ApiError> {
    use crate::responses::routes::{prepare, response_request};
    let request: crate::responses::request::ResponsesRequest = parse_bytes(body, "")?;
    request.check()?;
    let counted = prepare(&request, model, Default::default(), &[]).map(|prepared| prepared.turn.chat_options(&model.info));
    let (_, engine_request) = response_request(&request, model, &[])?;
    counted?;
    Ok(engine_request)
}

/// `POST /v1/messages`, then `POST /v1/messages/count_tokens` on the same body.
pub fn messages(body: &[u8], model: &ServedModel) -> Result<Request, ApiError> {
    use crate::messages::routes::{message_request, prepare};
    let request: crate::messages::request::MessagesRequest = parse_bytes(body, "")?;
    let _ = (request.ignored(), request.omit_thinking());
    let counted = prepare(&request, model, Default::default()).map(|turn| turn.chat_options(&model.info));
    let (engine_request, _callable) = message_request(&request, model)?;
    counted?;
    Ok(engine_request)
}

/// `POST /v1/embeddings`, with a model whose vectors are `dimensions` long.
pub fn embeddings(body: &[u8], dimensions: usize) -> Result<(), ApiError> {
    let request: crate::embeddings::EmbeddingsRequest = parse_bytes(body, "")?;
    request.texts()?;
    request.encoding()?;
    request.embed_prompt()?;
    crate::embeddings::dimensions_asked(request.dimensions, dimensions)?;
    Ok(())
}

/// `POST /api/chat`; `None` when it only loads (or unloads) the model.
pub fn ollama_chat(body: &[u8], model: &ServedModel) -> Result<Option<Request>, ApiError> {
    let request: crate::ollama::request::ChatRequest = parse_bytes(body, "")?;
    request.common.keep_alive()?;
    if request.messages.is_empty() {
        return Ok(None);
    }
    Ok(Some(request.turn(&model.info, &model.name)?.request(&model.info, model.id)?))
}

/// `POST /api/generate`; `None` when it only loads (or unloads) the model.
pub fn ollama_generate(body: &[u8], model: &ServedModel) -> Result<Option<Request>, ApiError> {
    let request: crate::ollama::request::GenerateRequest = parse_bytes(body, "")?;
    request.common.keep_alive()?;
    if request.prompt.is_empty() && request.images.is_empty() {
        request.refused_fields()?;
        return Ok(None);
    }
    Ok(Some(request.turn(&model.info, &model.name)?.request(&model.info, model.id)?))
}

/// `POST /api/embed` (and the legacy `/api/embeddings`, which reads `prompt` alone), with a model
/// whose vectors are `dimensions` long.
pub fn ollama_embed(body: &[u8], dimensions: usize) -> Result<(), ApiError> {
    let request: crate::ollama::request::EmbedRequest = parse_bytes(body, "")?;
    request.keep_alive()?;
    request.texts()?;
    crate::embeddings::dimensions_asked(request.dimensions, dimensions)?;
    Ok(())
}
