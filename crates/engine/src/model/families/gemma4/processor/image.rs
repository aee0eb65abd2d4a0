//! The Gemma 4 image processor: resize to the largest size within the patch budget that keeps
//! the aspect ratio and is a multiple of `pooling × patch` on each side, scale to [0, 1], cut
//! into `patch × patch` squares and pad to the budget. The vision tower pools `pooling²`
//! patches into one soft token.

use image::RgbImage;

use super::config::ImageConfig;
use crate::error::{EngineError, MediaProblem, Result};
use crate::media::pil_resize::resize_like_pil;

/// One image ready for the vision tower.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageInput {
    /// `[max_patches, patch_dim]` row-major, `patch_dim = patch_size² × 3`. Patch `k` is the
    /// square at row `k / patches_wide`, column `k % patches_wide`; within a patch values run
    /// over pixel rows, then pixel columns, then R, G, B. Rows from `num_patches` on are 0.
    pub pixel_values: Vec<f32>,
    /// `[max_patches, 2]`: each patch's (column, row) in the patch grid; `(-1, -1)` for padding.
    pub position_ids: Vec<i32>,
    pub max_patches: usize,
    pub patch_dim: usize,
    /// Real patches: `patches_high × patches_wide`.
    pub num_patches: usize,
    /// Soft tokens the image takes in the prompt: `num_patches / pooling²`.
    pub soft_tokens: usize,
    /// The size the image was resized to (height, width), in pixels.
    pub resized: (usize, usize),
}

/// The size the processor resizes a `height × width` image to (`get_aspect_ratio_preserving_size`).
pub fn target_size(height: usize, width: usize, config: &ImageConfig) -> Result<(usize, usize)> {
    let (patch, pooling) = (config.patch_size, config.pooling_kernel_size);
    let max_patches = config.max_patches();
    let unusable = |detail: String| EngineError::media("image", MediaProblem::Unsuitable { detail });
    if height == 0 || width == 0 {
        return Err(unusable("the image has no pixels".into()));
    }
    let target_px = (max_patches * patch * patch) as f64;
    let factor = (target_px / (height * width) as f64).sqrt();
    let side = pooling * patch;
    let mut target_h = (factor * height as f64 / side as f64).floor() as usize * side;
    let mut target_w = (factor * width as f64 / side as f64).floor() as usize * side;
    let max_side = (max_patches / (pooling * pooling)) * side;
    match (target_h, target_w) {
        (0, 0) => return Err(unusable("it is too small for the model".into())),
        (0, _) => {
            target_h = side;
            target_w = ((width as f64 / height as f64).floor() as usize * side).min(max_side);
        }
        (_, 0) => {
            target_w = side;
            target_h = ((height as f64 / width as f64).floor() as usize * side).min(max_side);
        }
        _ => {}
    }
    if (target_h * target_w) as f64 > target_px {
        return Err(unusable(format!("a {width}×{height} image is too long and thin for the model")));
    }
    Ok((target_h, target_w))
}

/// Soft tokens a `height × width` image takes, without touching its pixels.
pub fn soft_tokens(height: usize, width: usize, config: &ImageConfig) -> Result<usize> {
    let (h, w) = if config.do_resize { target_size(height, width, config)? } else { (height, width) };
    let pooling = config.pooling_kernel_size;
    Ok((h / config.patch_size) * (w / config.patch_size) / (pooling * pooling))
}

/// Runs the processor on one decoded image.
pub fn preprocess_image(image: &RgbImage, config: &ImageConfig) -> Result<ImageInput> {
    config.validate()?;
    let (height, width) = (image.height() as usize, image.width() as usize);
    let resized;
    let image = if config.do_resize {
        let (h, w) = target_size(height, width, config)?;
        resized = resize_like_pil(image, w as u32, h as u32, config.filter()?);
        &resized
    } else {
        image
    };
    let (height, width) = (image.height() as usize, image.width() as usize);
    let patch = config.patch_size;
    let (high, wide) = (height / patch, width / patch);
    let num_patches = high * wide;
    let max_patches = config.max_patches();
    if num_patches > max_patches {
        return Err(EngineError::media(
            "image",
            MediaProblem::Unsuitable { detail: format!("{num_patches} patches exceed the model's {max_patches}") },
        ));
    }

    let scale = pixel_scale(config);
    let patch_dim = config.patch_dim();
    let mut pixel_values = vec![0f32; max_patches * patch_dim];
    let mut position_ids = vec![-1i32; max_patches * 2];
    for (k, row) in pixel_values.chunks_exact_mut(patch_dim).take(num_patches).enumerate() {
        let (py, px) = (k / wide, k % wide);
        for dy in 0..patch {
            for dx in 0..patch {
                let pixel = image.get_pixel((px * patch + dx) as u32, (py * patch + dy) as u32);
                for c in 0..3 {
                    row[(dy * patch + dx) * 3 + c] = scale[c](pixel.0[c]);
                }
            }
        }
        position_ids[k * 2] = px as i32;
        position_ids[k * 2 + 1] = py as i32;
    }
    let pooling = config.pooling_kernel_size;
    Ok(ImageInput {
        pixel_values,
        position_ids,
        max_patches,
        patch_dim,
        num_patches,
        soft_tokens: num_patches / (pooling * pooling),
        resized: (height, width),
    })
}

/// Byte to model value per channel, in transformers' precision: rescale in float64 then
/// store float32; normalise in float32.
fn pixel_scale(config: &ImageConfig) -> [impl Fn(u8) -> f32; 3] {
    let (rescale, factor, normalize) = (config.do_rescale, config.rescale_factor, config.do_normalize);
    let (mean, std) = (config.image_mean, config.image_std);
    std::array::from_fn(move |c| {
        move |v: u8| {
            let x = if rescale { (v as f64 * factor) as f32 } else { v as f32 };
            if normalize {
                (x - mean[c] as f32) / std[c] as f32
            } else {
                x
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_reference_rule() {
        let config = ImageConfig::default();
        // Values from transformers' get_aspect_ratio_preserving_size.
        assert_eq!(target_size(100, 160, &config).unwrap(), (624, 1008));
        assert_eq!(target_size(90, 50, &config).unwrap(), (1056, 576));
        assert_eq!(target_size(37, 301, &config).unwrap(), (240, 2256));
        assert_eq!(soft_tokens(100, 160, &config).unwrap(), 273);
    }

    #[test]
    fn extreme_aspect_ratios_do_not_panic() {
        let config = ImageConfig::default();
        assert_eq!(target_size(1, 100_000, &config).unwrap(), (48, 13440));
        assert_eq!(target_size(100_000, 1, &config).unwrap(), (13440, 48));
        assert!(target_size(0, 5, &config).is_err());
    }

    #[test]
    fn patches_and_positions_are_laid_out_like_the_reference() {
        let config = ImageConfig { patch_size: 2, pooling_kernel_size: 1, max_soft_tokens: 70, do_resize: false, ..Default::default() };
        let image = RgbImage::from_fn(4, 2, |x, y| image::Rgb([(x + 4 * y) as u8, 100, 255]));
        let out = preprocess_image(&image, &config).unwrap();
        assert_eq!((out.num_patches, out.soft_tokens, out.patch_dim), (2, 2, 12));
        // Patch 1 is columns 2..4: pixels (2,0), (3,0), (2,1), (3,1).
        let red: Vec<f32> = out.pixel_values[12..24].iter().step_by(3).map(|v| v * 255.0).collect();
        assert_eq!(red.iter().map(|v| v.round() as u8).collect::<Vec<_>>(), vec![2, 3, 6, 7]);
        assert_eq!(&out.position_ids[..6], &[0, 0, 1, 0, -1, -1]);
    }
}
