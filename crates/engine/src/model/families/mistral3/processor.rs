//! Mistral 3's processor for images, as transformers 5.25's `PixtralProcessor` with the Pillow
//! image processor (`PixtralImageProcessorPil`) prepares them:
//!
//! - the size: shrunk (aspect kept, each side floored) until it fits the largest size
//!   (`longest_edge` on both sides), then each side rounded up to whole soft tokens (patch ×
//!   spatial merge pixels); a side that shrinks to nothing is refused, as Pillow would;
//! - Pillow's resize (bicubic by default), rescale in float64 stored as float32, normalise in
//!   float32; the tower reads the image as [3, height, width];
//! - the prompt: each `[IMG]` the chat template wrote becomes the image's rows of soft tokens,
//!   each row `[IMG]` × columns then `[IMG_BREAK]`, the last row's break `[IMG_END]` instead;
//!   the whole text is tokenized at once. The breaks and the end are text: each row of `[IMG]`
//!   is one run of the image's soft tokens, the tower's rows filling them in order.

use crate::error::{EngineError, MediaProblem, Result};
use crate::media::pil_resize::{resize_like_pil, PilFilter};
use crate::media::{MediaKind, RgbImage};
use crate::model::media::expanded_prompt::{ExpandedPrompt, SoftTokenSpan};
use crate::text::Tokenizer;

use super::config::{ImageMarkers, ImageSettings};

/// A preprocessed image: [3, height, width] float32, row-major.
pub struct ImagePixels {
    pub values: Vec<f32>,
    pub height: usize,
    pub width: usize,
}

fn unsuitable(detail: String) -> EngineError {
    EngineError::media("image", MediaProblem::Unsuitable { detail })
}

/// The (height, width) the processor gives a `height × width` image.
pub fn resized_size(height: usize, width: usize, s: &ImageSettings) -> Result<(usize, usize)> {
    if height == 0 || width == 0 {
        return Err(unsuitable("the image has no pixels".into()));
    }
    if !s.do_resize {
        return Ok((height, width));
    }
    let (mut h, mut w) = (height, width);
    let ratio = (height as f64 / s.max_size.0 as f64).max(width as f64 / s.max_size.1 as f64);
    if ratio > 1.0 {
        h = (height as f64 / ratio).floor() as usize;
        w = (width as f64 / ratio).floor() as usize;
    }
    if h == 0 || w == 0 {
        return Err(unsuitable(format!(
            "{width} × {height} pixels shrink to {w} × {h} to fit {} × {}: a side would vanish",
            s.max_size.1, s.max_size.0
        )));
    }
    let unit = s.unit();
    Ok((h.div_ceil(unit) * unit, w.div_ceil(unit) * unit))
}

/// (rows, columns) of soft tokens of a `height × width` image.
pub fn token_grid(height: usize, width: usize, s: &ImageSettings) -> Result<(usize, usize)> {
    let (h, w) = resized_size(height, width, s)?;
    let unit = s.unit();
    if h % unit != 0 || w % unit != 0 {
        // Only without resizing: the tower's patch merger needs whole blocks.
        return Err(unsuitable(format!("{w} × {h} pixels are not whole {unit}-pixel blocks (the processor does not resize)")));
    }
    Ok((h / unit, w / unit))
}

/// An image as the tower's input.
pub fn preprocess_image(image: &RgbImage, s: &ImageSettings) -> Result<ImagePixels> {
    let (height, width) = (image.height() as usize, image.width() as usize);
    let (rows, cols) = token_grid(height, width, s)?;
    let (rh, rw) = (rows * s.unit(), cols * s.unit());
    let resized;
    let image = if (rh, rw) != (height, width) {
        let filter = PilFilter::from_pil(s.resample)
            .ok_or_else(|| EngineError::invalid("resample", format!("resampling filter {} is not supported", s.resample)))?;
        resized = resize_like_pil(image, rw as u32, rh as u32, filter);
        &resized
    } else {
        image
    };
    let raw = image.as_raw();
    let mut values = Vec::with_capacity(3 * rh * rw);
    for c in 0..3 {
        let (mean, std) = (s.image_mean[c] as f32, s.image_std[c] as f32);
        for i in 0..rh * rw {
            let v = raw[i * 3 + c];
            // transformers rescales in float64 and stores float32, then normalises in float32.
            let x = if s.do_rescale { (v as f64 * s.rescale_factor) as f32 } else { v as f32 };
            values.push(if s.do_normalize { (x - mean) / std } else { x });
        }
    }
    Ok(ImagePixels { values, height: rh, width: rw })
}

/// Expands the i-th `[IMG]` in `rendered` to `grids[i]`'s rows of soft tokens (each row closed by
/// the break marker, the last by the end marker) and tokenizes the whole text; each row of an
/// image is one span of that image.
pub fn expand_prompt(
    tokenizer: &Tokenizer,
    markers: &ImageMarkers,
    image_id: u32,
    rendered: &str,
    grids: &[(usize, usize)],
) -> Result<ExpandedPrompt> {
    let pieces: Vec<&str> = rendered.split(markers.image.as_str()).collect();
    let found = pieces.len() - 1;
    if found != grids.len() {
        return Err(EngineError::Template(format!(
            "the prompt has {found} image placeholders (`{}`) but {} images were attached",
            markers.image,
            grids.len()
        )));
    }
    let mut text = String::with_capacity(rendered.len() + grids.iter().map(|(r, c)| r * (c + 1) * 8).sum::<usize>());
    for (piece, &(rows, cols)) in pieces.iter().zip(grids) {
        text.push_str(piece);
        for row in 0..rows {
            (0..cols).for_each(|_| text.push_str(&markers.image));
            text.push_str(if row + 1 == rows { &markers.end } else { &markers.row_break });
        }
    }
    text.push_str(pieces.last().expect("split gives at least one piece"));
    let ids = tokenizer.encode_prompt(&text)?;
    let mut spans = Vec::new();
    let mut at = 0;
    for (index, &(rows, cols)) in grids.iter().enumerate() {
        for row in 0..rows {
            let start = (at..ids.len()).find(|&p| ids[p] == image_id).ok_or_else(|| {
                EngineError::Tokenizer(format!("image {} did not tokenize to its rows of `{}` tokens", index + 1, markers.image))
            })?;
            let run = ids[start..].iter().take_while(|&&t| t == image_id).count();
            if run != cols {
                return Err(EngineError::Tokenizer(format!(
                    "row {} of image {} tokenized to {run} `{}` tokens, not {cols}",
                    row + 1,
                    index + 1,
                    markers.image
                )));
            }
            spans.push(SoftTokenSpan { kind: MediaKind::Image, index, start, len: cols });
            at = start + cols;
        }
    }
    Ok(ExpandedPrompt { ids, spans })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(longest: usize) -> ImageSettings {
        ImageSettings {
            do_resize: true,
            do_rescale: true,
            do_normalize: true,
            rescale_factor: 1.0 / 255.0,
            image_mean: [0.5; 3],
            image_std: [0.5; 3],
            resample: 3,
            max_size: (longest, longest),
            patch_size: 4,
            merge_size: 2,
        }
    }

    #[test]
    fn sizes_follow_the_reference() {
        // 67 × 45 into 48: shrunk by 67 / 48 to 47 × 32 (floored), then up to whole 8-pixel blocks.
        assert_eq!(resized_size(45, 67, &settings(48)).unwrap(), (32, 48));
        // Small images are not grown, only rounded up to whole blocks.
        assert_eq!(resized_size(9, 17, &settings(48)).unwrap(), (16, 24));
        assert_eq!(token_grid(45, 67, &settings(48)).unwrap(), (4, 6));
        // 1000 × 1 into 48: the height floors to nothing, which Pillow cannot resize to.
        assert!(resized_size(1, 1000, &settings(48)).is_err());
        assert!(resized_size(0, 10, &settings(48)).is_err());
    }
}
