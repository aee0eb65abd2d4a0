//! Whether a loaded model takes an image, an audio clip or a video: what its towers read
//! (`ModelInfo::{vision, audio, video}`, set by what loaded). Before a model is loaded the
//! picker's badges come from the family's rule (`confab_engine::media_reads`).

use confab_engine::MediaKind;
use confab_engine::ModelInfo;

/// Whether `model` reads media of `kind`.
pub fn takes(model: &ModelInfo, kind: MediaKind) -> bool {
    match kind {
        MediaKind::Image => model.vision,
        MediaKind::Audio => model.audio,
        MediaKind::Video => model.video,
    }
}
