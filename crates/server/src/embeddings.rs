//! `POST /v1/embeddings` in OpenAI's shape: `input` (a string or an array of strings), `model`,
//! `encoding_format` (`float` or `base64`: little-endian float32 bytes, what OpenAI's Python
//! client asks for by default), `dimensions` (the first N of each vector, normalized again, as
//! OpenAI's text-embedding-3 models shorten theirs; the Matryoshka-trained models this serves
//! are made for it). Two fields of Confab's own: `input_type` (`document`, the default, or
//! `query`: which of the model's prompts is written before each text, as sentence-transformers'
//! `encode_document` / `encode_query` do) and `prompt` (a text written before each input as it
//! is, such as Qwen3-Embedding's "Instruct: {task}\nQuery:" for another task).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use base64::Engine as _;
use confab_engine::EmbedPrompt;
use serde_json::{json, Value};

use crate::shared::body::{parse, OPENAI_REFERENCE};
use crate::shared::error::ApiError;
use crate::{ServedModel, ServerState};

/// OpenAI's limit on the number of inputs in one request.
const MAX_INPUTS: usize = confab_limits::SERVER_EMBEDDING_INPUTS.as_usize();

#[derive(serde::Deserialize)]
pub(crate) struct EmbeddingsRequest {
    model: Option<String>,
    #[serde(default)]
    input: Value,
    encoding_format: Option<String>,
    pub(crate) dimensions: Option<i64>,
    /// Confab's own: `query` or `document`.
    input_type: Option<String>,
    /// Confab's own: written before each input as it is.
    prompt: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    Float,
    Base64,
}

impl EmbeddingsRequest {
    /// The texts: a string, or an array of strings. Token arrays (OpenAI accepts them for its own
    /// tokenizer) are refused: they would be ids in another vocabulary.
    pub(crate) fn texts(&self) -> Result<Vec<String>, ApiError> {
        let texts = match &self.input {
            Value::String(text) => vec![text.clone()],
            Value::Array(items) if items.iter().all(Value::is_string) => {
                items.iter().filter_map(Value::as_str).map(str::to_string).collect()
            }
            Value::Array(items) if items.iter().all(|i| i.is_number() || i.is_array()) && !items.is_empty() => {
                return Err(ApiError::invalid(
                    Some("input"),
                    "Token arrays are not accepted here: send the text itself (a string or an array of strings); this server tokenizes it with the embedding model's own tokenizer.",
                ))
            }
            Value::Null => return Err(ApiError::invalid(Some("input"), "input is required: a string or an array of strings.")),
            _ => return Err(ApiError::invalid(Some("input"), "input must be a string or an array of strings.")),
        };
        if texts.is_empty() {
            return Err(ApiError::invalid(Some("input"), "input is an empty array; send at least one string."));
        }
        if texts.len() > MAX_INPUTS {
            return Err(ApiError::invalid(
                Some("input"),
                format!(
                    "input has {} strings; send at most {MAX_INPUTS} per request ({}).",
                    texts.len(),
                    confab_limits::SERVER_EMBEDDING_INPUTS.name
                ),
            ));
        }
        if let Some(i) = texts.iter().position(String::is_empty) {
            return Err(ApiError::invalid(Some("input"), format!("input {i} is an empty string; every input must have some text.")));
        }
        Ok(texts)
    }

    pub(crate) fn encoding(&self) -> Result<Encoding, ApiError> {
        match self.encoding_format.as_deref() {
            None | Some("float") => Ok(Encoding::Float),
            Some("base64") => Ok(Encoding::Base64),
            Some(other) => {
                Err(ApiError::invalid(Some("encoding_format"), format!("encoding_format `{other}` is not one of float, base64.")))
            }
        }
    }

    pub(crate) fn embed_prompt(&self) -> Result<EmbedPrompt, ApiError> {
        if let Some(prompt) = &self.prompt {
            return Ok(EmbedPrompt::Text(prompt.clone()));
        }
        match self.input_type.as_deref() {
            None | Some("document") => Ok(EmbedPrompt::Document),
            Some("query") => Ok(EmbedPrompt::Query),
            Some(other) => Err(ApiError::invalid(Some("input_type"), format!("input_type `{other}` is not one of query, document."))),
        }
    }
}

/// The vectors of `texts` from the embedding model `model` and the prompt tokens they took,
/// cut to `dimensions` where asked (both the OpenAI and the Ollama API embed through here).
pub(crate) async fn vectors(
    state: &Arc<ServerState>,
    model: &ServedModel,
    texts: Vec<String>,
    prompt: EmbedPrompt,
    dimensions: Option<i64>,
) -> Result<(Vec<Vec<f32>>, usize), ApiError> {
    let info = model.info.embedding.clone().ok_or_else(|| ApiError::not_an_embedder(&model.name, &[]))?;
    let dimensions = dimensions_asked(dimensions, info.dimensions)?;
    let (embedding, held) = (state.clone(), model.clone());
    // The engine answers on its own thread; waiting for it must not hold a tokio worker. The
    // model is held meanwhile, so that its pool does not unload it.
    let out = tokio::task::spawn_blocking(move || embedding.source.engine().embed(held.id, texts, prompt))
        .await
        .map_err(|e| ApiError::internal(format!("embedding failed: {e}")))??;
    let vectors =
        out.vectors.into_iter().map(|v| if dimensions < v.len() { shortened(v, dimensions, info.normalized) } else { v }).collect();
    Ok((vectors, out.prompt_tokens))
}

/// The length of the vectors a request asks for (`dimensions`), where the model's are `length`
/// long.
pub(crate) fn dimensions_asked(asked: Option<i64>, length: usize) -> Result<usize, ApiError> {
    match asked {
        None => Ok(length),
        Some(d) if d >= 1 && d as u64 <= length as u64 => Ok(d as usize),
        Some(d) => Err(ApiError::invalid(
            Some("dimensions"),
            format!("dimensions {d} is not between 1 and {length}, the length of this model's vectors."),
        )),
    }
}

/// The first `dimensions` of the vector, normalized again when the model's vectors are.
fn shortened(mut vector: Vec<f32>, dimensions: usize, normalize: bool) -> Vec<f32> {
    vector.truncate(dimensions);
    if normalize {
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
        vector.iter_mut().for_each(|x| *x /= norm);
    }
    vector
}

fn encoded(vector: &[f32], encoding: Encoding) -> Value {
    match encoding {
        Encoding::Float => json!(vector),
        Encoding::Base64 => {
            let bytes: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
            Value::String(base64::engine::general_purpose::STANDARD.encode(bytes))
        }
    }
}

pub(crate) async fn create(State(state): State<Arc<ServerState>>, body: Result<Bytes, BytesRejection>) -> Response {
    let answer = async {
        let request: EmbeddingsRequest = parse(body, state.body_limit, OPENAI_REFERENCE)?;
        let model = state.embedder(request.model.as_deref()).await?;
        let texts = request.texts()?;
        let encoding = request.encoding()?;
        let prompt = request.embed_prompt()?;
        let (vectors, prompt_tokens) = vectors(&state, &model, texts, prompt, request.dimensions).await?;
        let data: Vec<Value> = vectors
            .iter()
            .enumerate()
            .map(|(index, vector)| json!({ "object": "embedding", "index": index, "embedding": encoded(vector, encoding) }))
            .collect();
        let usage = json!({ "prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens });
        Ok::<_, ApiError>(Json(json!({ "object": "list", "data": data, "model": model.name, "usage": usage })).into_response())
    };
    answer.await.unwrap_or_else(IntoResponse::into_response)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(body: Value) -> EmbeddingsRequest {
        serde_json::from_value(body).unwrap()
    }

    #[test]
    fn inputs_are_strings_and_token_arrays_are_refused() {
        assert_eq!(request(json!({"input": "a"})).texts().unwrap(), ["a"]);
        assert_eq!(request(json!({"input": ["a", "b"]})).texts().unwrap(), ["a", "b"]);
        let tokens = request(json!({"input": [1, 2, 3]})).texts().unwrap_err();
        assert!(tokens.message.contains("Token arrays"), "{}", tokens.message);
        assert!(request(json!({"input": [[1, 2]]})).texts().unwrap_err().message.contains("Token arrays"));
        assert!(request(json!({"input": []})).texts().is_err());
        assert!(request(json!({"input": ["a", ""]})).texts().unwrap_err().message.contains("input 1"));
        assert!(request(json!({})).texts().unwrap_err().message.contains("required"));
    }

    #[test]
    fn shortened_vectors_are_normalized_again_and_base64_is_little_endian_float32() {
        let v = shortened(vec![3.0, 4.0, 12.0], 2, true);
        assert_eq!(v, [0.6, 0.8]);
        let text = encoded(&[1.0, -2.0], Encoding::Base64);
        let bytes = base64::engine::general_purpose::STANDARD.decode(text.as_str().unwrap()).unwrap();
        assert_eq!(bytes, [1.0f32.to_le_bytes(), (-2.0f32).to_le_bytes()].concat());
    }

    #[test]
    fn prompts_and_encodings_are_checked() {
        assert_eq!(request(json!({"input_type": "query"})).embed_prompt().unwrap(), EmbedPrompt::Query);
        assert_eq!(request(json!({})).embed_prompt().unwrap(), EmbedPrompt::Document);
        assert_eq!(request(json!({"prompt": "P: ", "input_type": "query"})).embed_prompt().unwrap(), EmbedPrompt::Text("P: ".into()));
        assert!(request(json!({"input_type": "passage"})).embed_prompt().is_err());
        assert!(request(json!({"encoding_format": "int8"})).encoding().is_err());
        assert_eq!(request(json!({"encoding_format": "base64"})).encoding().unwrap(), Encoding::Base64);
    }
}
