//! Whether a loaded model takes an image, an audio clip or a video: what its towers read
//! (`ModelInfo::{vision, audio, video}`, set by what loaded). Before a model is loaded the
//! picker's badges come from the same facts (`confab_engine::media_reads`).

use confab_engine::MediaKind;
use confab_engine::ModelInfo;

use crate::error::TurnError;

/// Whether `model` reads media of `kind`.
pub fn takes(model: &ModelInfo, kind: MediaKind) -> bool {
    match kind {
        MediaKind::Image => model.vision,
        MediaKind::Audio => model.audio,
        MediaKind::Video => model.video,
    }
}

/// `Ok` when `model` reads `kind`; else the refusal, naming the model as its user knows it.
pub fn check_takes(model: &ModelInfo, model_name: &str, kind: MediaKind) -> Result<(), TurnError> {
    if takes(model, kind) {
        Ok(())
    } else {
        Err(TurnError::ModelCannotTake { model: model_name.to_string(), kind })
    }
}
