//! What a request carries inline: `data:<type>;base64,<data>` URLs and base64 fields, decoded
//! once for images, clips, videos and documents alike. Other URLs are refused: a local server
//! does not fetch from the network.

use base64::Engine as _;

use crate::shared::error::ApiError;

/// A data URL's bytes and media type. `field` and `example` name the part in errors.
pub fn decode(url: &str, param: &str, field: &str, example: &str) -> Result<(Vec<u8>, String), ApiError> {
    let refuse = || {
        ApiError::invalid(
            Some(param),
            format!("{field} must be a data URL (data:{example};base64,...); this local server does not download media."),
        )
    };
    let rest = url.strip_prefix("data:").ok_or_else(refuse)?;
    let (header, data) = rest.split_once(',').ok_or_else(refuse)?;
    let media_type = header.strip_suffix(";base64").ok_or_else(refuse)?;
    Ok((base64(data, param)?, media_type.to_string()))
}

pub fn base64(data: &str, param: &str) -> Result<Vec<u8>, ApiError> {
    base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| ApiError::invalid(Some(param), format!("the media data is not valid base64 ({e}).")))
}
