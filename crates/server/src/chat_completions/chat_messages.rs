//! OpenAI chat messages to the engine's: text parts joined, images (`image_url` data URLs),
//! videos (`video_url`) and clips (`input_audio`) handed to the engine as the bytes received.

use confab_engine::MediaItem;
use confab_engine::ModelInfo;
use confab_engine::ToolCall;
use confab_engine::{ChatMessage, MediaKind};
use serde_json::Value;

use super::request::{Content, Message, Part};
use crate::shared::error::ApiError;
use crate::shared::{data_url, documents};

/// The conversation as the engine takes it.
pub fn chat_messages(messages: &[Message], model: &ModelInfo, model_name: &str) -> Result<Vec<ChatMessage>, ApiError> {
    if messages.is_empty() {
        return Err(ApiError::invalid(Some("messages"), "messages is empty; send at least one message."));
    }
    let mut out = Vec::with_capacity(messages.len());
    let mut call_ids: Vec<&str> = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let role = match message.role.as_str() {
            "system" | "developer" => "system",
            "user" => "user",
            "assistant" => "assistant",
            "tool" => "tool",
            other => {
                return Err(ApiError::invalid(
                    Some(&format!("messages[{i}].role")),
                    format!("role `{other}` is not supported; use system, developer, user, assistant or tool."),
                ))
            }
        };
        let mut text: Vec<String> = Vec::new();
        let mut media = Vec::new();
        let mut documents = Vec::new();
        match &message.content {
            None => {}
            Some(Content::Text(t)) => text.push(t.clone()),
            Some(Content::Parts(parts)) => {
                for (j, part) in parts.iter().enumerate() {
                    let param = format!("messages[{i}].content[{j}]");
                    match part {
                        Part::Text { text: t } => text.push(t.clone()),
                        Part::File { file } => {
                            let Some(url) = &file.file_data else {
                                return Err(ApiError::invalid(
                                    Some(&param),
                                    "a file part needs file_data (a data URL); file ids need OpenAI's Files API, which this server does not have.",
                                ));
                            };
                            let (bytes, media_type) = data_url::decode(url, &param, "file_data", "application/pdf")?;
                            let name = file.filename.clone().unwrap_or_else(|| documents::name_for(&media_type).to_string());
                            documents.push(documents::document_text(&name, &bytes, &param)?);
                        }
                        Part::ImageUrl { image_url } => {
                            media.push(image_url_item(&image_url.url, model, model_name, &param)?);
                        }
                        Part::VideoUrl { video_url } => {
                            require(model, MediaKind::Video, model_name, &param)?;
                            let (bytes, extension) = data_url(&video_url.url, &param, "video_url", "video/mp4")?;
                            media.push(received(MediaKind::Video, bytes, &extension, &param));
                        }
                        Part::InputAudio { input_audio } => {
                            require(model, MediaKind::Audio, model_name, &param)?;
                            let bytes = data_url::base64(&input_audio.data, &param)?;
                            let extension = clean_extension(&input_audio.format, &param)?;
                            media.push(received(MediaKind::Audio, bytes, &extension, &param));
                        }
                    }
                }
            }
        }
        let mut chat = ChatMessage::new(role, documents::with_documents(&documents, &text)).with_media(media);
        if role == "assistant" {
            for (j, call) in message.tool_calls.iter().flatten().enumerate() {
                let arguments = call_arguments(&call.function.arguments, &format!("messages[{i}].tool_calls[{j}].function.arguments"))?;
                chat.tool_calls.push(ToolCall { id: call.id.clone(), name: call.function.name.clone(), arguments });
                call_ids.push(&call.id);
            }
            chat.reasoning_content = message.reasoning_content.clone().filter(|r| !r.is_empty());
        }
        if role == "tool" {
            let id = message.tool_call_id.as_deref().unwrap_or_default();
            if !call_ids.contains(&id) {
                return Err(ApiError::invalid(
                    Some(&format!("messages[{i}].tool_call_id")),
                    format!("no earlier assistant message called a tool with id `{id}`; a tool message answers a call by its id."),
                ));
            }
            chat.tool_call_id = Some(id.to_string());
            chat.name = message.name.clone();
        }
        out.push(chat);
    }
    Ok(out)
}

/// A call's arguments as an object: OpenAI sends them as JSON text.
pub fn call_arguments(arguments: &Value, param: &str) -> Result<Value, ApiError> {
    let parsed = match arguments {
        Value::String(text) if text.trim().is_empty() => Value::Object(Default::default()),
        Value::String(text) => {
            serde_json::from_str(text).map_err(|e| ApiError::invalid(Some(param), format!("the arguments are not valid JSON ({e}).")))?
        }
        other => other.clone(),
    };
    if !parsed.is_object() {
        return Err(ApiError::invalid(Some(param), "the arguments must be a JSON object."));
    }
    Ok(parsed)
}

/// Media the model reads (`confab_turn::takes`), or a refusal naming the content part.
fn require(model: &ModelInfo, kind: MediaKind, model_name: &str, param: &str) -> Result<(), ApiError> {
    if confab_turn::takes(model, kind) {
        return Ok(());
    }
    let what = match kind {
        MediaKind::Image => "images",
        MediaKind::Audio => "audio",
        MediaKind::Video => "videos",
    };
    Err(ApiError::invalid(
        Some(param),
        format!("The model `{model_name}` does not read {what}; send text only, or load a model that reads {what}."),
    )
    .with_code("unsupported_content"))
}

/// An image sent as a data URL (OpenAI's `image_url`).
pub fn image_url_item(url: &str, model: &ModelInfo, model_name: &str, param: &str) -> Result<MediaItem, ApiError> {
    require(model, MediaKind::Image, model_name, param)?;
    let (bytes, extension) = data_url(url, param, "image_url", "image/png")?;
    Ok(received(MediaKind::Image, bytes, &extension, param))
}

/// An image sent as base64 with its media type (Anthropic's `{"type": "base64", "media_type",
/// "data"}` source).
pub fn base64_image(media_type: &str, data: &str, model: &ModelInfo, model_name: &str, param: &str) -> Result<MediaItem, ApiError> {
    require(model, MediaKind::Image, model_name, param)?;
    let subtype = media_type.split_once('/').map_or(media_type, |(_, s)| s);
    let extension = if subtype == "jpeg" { "jpg".to_string() } else { clean_extension(subtype, param)? };
    Ok(received(MediaKind::Image, data_url::base64(data, param)?, &extension, param))
}

/// The bytes a request carried, as the engine reads them: named after the content part, so that
/// an error about them points at it, with the format's extension (a hint for audio containers,
/// as a file's name would be). The engine hashes the bytes, the identity the encoder and prefix
/// caches share with the same file attached in the app.
fn received(kind: MediaKind, bytes: Vec<u8>, extension: &str, param: &str) -> MediaItem {
    MediaItem::from_bytes(kind, format!("{param}.{extension}"), bytes)
}

/// `data:<type>/<subtype>;base64,<data>` to bytes and a file extension (`data_url::decode`).
/// `field` and `example` name the part in errors.
fn data_url(url: &str, param: &str, field: &str, example: &str) -> Result<(Vec<u8>, String), ApiError> {
    let (bytes, mime) = data_url::decode(url, param, field, example)?;
    let subtype = mime.split_once('/').map_or("bin", |(_, s)| s);
    let extension = if subtype == "jpeg" { "jpg".to_string() } else { clean_extension(subtype, param)? };
    Ok((bytes, extension))
}

/// A media type's name, safe as an extension (the decoders look at the bytes; the name is a hint).
fn clean_extension(name: &str, param: &str) -> Result<String, ApiError> {
    let ok = !name.is_empty() && name.len() <= 16 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '+');
    if !ok {
        return Err(ApiError::invalid(Some(param), format!("`{name}` is not a media format name (such as png, jpeg, wav or mp3).")));
    }
    Ok(name.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_urls_decode_and_others_are_refused() {
        let url = |u: &str| data_url(u, "p", "image_url", "image/png");
        let (bytes, extension) = url("data:image/jpeg;base64,AAEC").unwrap();
        assert_eq!((bytes, extension.as_str()), (vec![0, 1, 2], "jpg"));
        assert!(url("https://example.com/cat.png").unwrap_err().message.contains("does not download"));
        assert!(url("data:image/png;base64,@@@").unwrap_err().message.contains("base64"));
        assert!(url("data:image/../x;base64,AA==").is_err());
        let (_, extension) = data_url("data:video/mp4;base64,AAEC", "p", "video_url", "video/mp4").unwrap();
        assert_eq!(extension, "mp4");
    }
}
