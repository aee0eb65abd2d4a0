//! Qwen3-VL's processor for videos, as transformers 5.24's `Qwen3VLVideoProcessor` and
//! `Qwen3VLProcessor` prepare them:
//!
//! - sampling (`sample_frames`): `int(frames / video_fps × fps)` frames, at least `min_frames`,
//!   at most `max_frames` and the frames there are, at `linspace(0, frames - 1, n).round()`
//!   (numpy's: halves to even);
//! - `smart_resize` with the temporal factor: the pixel budget covers every sampled frame
//!   (optionally capped per frame, qwen-vl-utils' way, where the config says so);
//! - the resize: torchvision on uint8 frames, i.e. torch's antialiased bicubic
//!   (`media::torch_resize`), not Pillow's; then rescale and normalise fused as transformers
//!   does it (`(x − mean / factor) / (std / factor)` in float32);
//! - temporal patches: the last frame repeated to a multiple of `temporal_patch_size`, each
//!   patch (channel, time, row, column) in merge-block order, frame group by frame group; the
//!   grid is (groups, rows, columns) in patches;
//! - the prompt: the template's `<|vision_start|><|video_pad|><|vision_end|>` becomes, per
//!   frame group, `<{t:.1f} seconds>` (the mean of its first and last frame's time, index /
//!   video fps) then `<|vision_start|>`, the group's pads and `<|vision_end|>`: the template's
//!   own markers are replaced too, as in the processor the model was released with (transformers
//!   4.57 to 5.9 and 5.25; 5.10 to 5.24 kept them: docs/media.md).

use crate::error::{EngineError, MediaProblem, Result};
use crate::media::torch_resize::resize_like_torch_bicubic;
use crate::media::{RgbImage, VideoInfo};
use crate::model::media::expanded_prompt::VideoLayout;

use super::config::{ImageSettings, VideoSettings};

/// The frame indices the processor samples from a video of `info.frames` frames at `info.fps`.
pub fn sample_frames(info: &VideoInfo, s: &VideoSettings) -> Result<Vec<u64>> {
    let total = info.frames as usize;
    if total == 0 {
        return Err(unsuitable("the video has no frames".into()));
    }
    if !s.do_sample_frames {
        return Ok((0..info.frames).collect());
    }
    let count = match (s.num_frames, s.fps) {
        (Some(n), _) => n,
        (None, Some(fps)) => {
            // transformers assumes 24 when it is not known.
            let video_fps = if info.fps > 0.0 && info.fps.is_finite() { info.fps } else { 24.0 };
            let n = (total as f64 / video_fps * fps) as usize;
            n.max(s.min_frames).min(s.max_frames).min(total)
        }
        (None, None) => total.max(s.min_frames).min(s.max_frames),
    };
    Ok(linspace_rounded(total - 1, count))
}

/// `np.linspace(0, last, n).round().astype(int)`.
fn linspace_rounded(last: usize, n: usize) -> Vec<u64> {
    if n == 0 {
        return vec![];
    }
    if n == 1 {
        return vec![0];
    }
    let step = last as f64 / (n - 1) as f64;
    (0..n).map(|i| if i == n - 1 { last as f64 } else { i as f64 * step }).map(|v| v.round_ties_even() as u64).collect()
}

/// Each frame group's time in seconds as the prompt writes it: the mean of its first and last
/// frame's `index / fps`, the last frame repeated to fill the final group.
pub fn group_seconds(indices: &[u64], video_fps: f64, temporal: usize) -> Vec<f64> {
    let video_fps = if video_fps > 0.0 && video_fps.is_finite() { video_fps } else { 24.0 };
    let mut padded = indices.to_vec();
    if let Some(&last) = indices.last() {
        while !padded.len().is_multiple_of(temporal) {
            padded.push(last);
        }
    }
    let times: Vec<f64> = padded.iter().map(|&i| i as f64 / video_fps).collect();
    times.chunks(temporal).map(|c| (c[0] + c[temporal - 1]) / 2.0).collect()
}

/// The size (height, width) `smart_resize` gives `frames` frames of `height × width`.
pub fn smart_resize(frames: usize, height: usize, width: usize, s: &VideoSettings) -> Result<(usize, usize)> {
    let f = &s.frame;
    let factor = f.patch_size * f.merge_size;
    let temporal = f.temporal_patch_size;
    if frames < temporal {
        return Err(unsuitable(format!("the model reads videos of at least {temporal} frames; {frames} were sampled")));
    }
    if height == 0 || width == 0 {
        return Err(unsuitable("the video has no pixels".into()));
    }
    let (mut height, mut width) = (height as f64, width as f64);
    let factor_f = factor as f64;
    if height < factor_f || width < factor_f {
        let scale = (factor_f / height).max(factor_f / width);
        height = (height * scale).trunc();
        width = (width * scale).trunc();
    }
    if height.max(width) / height.min(width) > 200.0 {
        return Err(unsuitable(format!("its aspect ratio {:.0}:1 is over the model's 200:1", height.max(width) / height.min(width))));
    }
    let max_pixels = max_pixels(frames, s) as f64;
    let min_pixels = f.min_pixels as f64;
    let mut h_bar = (height / factor_f).round_ties_even() * factor_f;
    let mut w_bar = (width / factor_f).round_ties_even() * factor_f;
    let t_bar = (frames as f64 / temporal as f64).round_ties_even() * temporal as f64;
    let n = frames as f64;
    if t_bar * h_bar * w_bar > max_pixels {
        let beta = (n * height * width / max_pixels).sqrt();
        h_bar = factor_f.max((height / beta / factor_f).floor() * factor_f);
        w_bar = factor_f.max((width / beta / factor_f).floor() * factor_f);
    } else if t_bar * h_bar * w_bar < min_pixels {
        let beta = (min_pixels / (n * height * width)).sqrt();
        h_bar = (height * beta / factor_f).ceil() * factor_f;
        w_bar = (width * beta / factor_f).ceil() * factor_f;
    }
    Ok((h_bar as usize, w_bar as usize))
}

/// The budget over all frames: `size.longest_edge`, or with the per-frame cap
/// `max(min(max_video_tokens × factor², longest // frames), int(1.05 × shortest)) × frames`.
fn max_pixels(frames: usize, s: &VideoSettings) -> usize {
    let f = &s.frame;
    if !s.cap_pixels_per_frame {
        return f.max_pixels;
    }
    let factor = f.patch_size * f.merge_size;
    let cap = s.max_video_tokens * factor * factor;
    let per_frame = cap.min(f.max_pixels / frames).max((f.min_pixels as f64 * 1.05) as usize);
    per_frame * frames
}

/// How a video of `info` is laid out: its sampled frames, grid, soft tokens per frame group and
/// the groups' times.
pub fn layout(info: &VideoInfo, s: &VideoSettings) -> Result<VideoLayout> {
    let frames = sample_frames(info, s)?;
    let (height, width) = (info.height as usize, info.width as usize);
    let (h, w) = if s.frame.do_resize { smart_resize(frames.len(), height, width, s)? } else { (height, width) };
    let f = &s.frame;
    let unit = f.patch_size * f.merge_size;
    if h % unit != 0 || w % unit != 0 || h == 0 || w == 0 {
        return Err(unsuitable(format!("{w} × {h} pixels are not whole {unit}-pixel blocks")));
    }
    if frames.len() < f.temporal_patch_size {
        return Err(unsuitable(format!(
            "the model reads videos of at least {} frames; {} were sampled",
            f.temporal_patch_size,
            frames.len()
        )));
    }
    let groups = frames.len().div_ceil(f.temporal_patch_size);
    let grid = [groups, h / f.patch_size, w / f.patch_size];
    let per_group = grid[1] * grid[2] / (f.merge_size * f.merge_size);
    let seconds = group_seconds(&frames, info.fps, f.temporal_patch_size);
    Ok(VideoLayout { frames, group_tokens: vec![per_group; groups], group_seconds: seconds, grid })
}

/// A preprocessed video: its patches and grid.
pub struct VideoPatches {
    /// [t × h × w, 3 × temporal × patch²], row-major.
    pub values: Vec<f32>,
    pub grid: [usize; 3],
    pub patch_dim: usize,
}

/// The sampled frames (all one size) as the tower's input, on the grid `layout` gave.
pub fn preprocess_video(frames: &[RgbImage], grid: [usize; 3], s: &VideoSettings) -> Result<VideoPatches> {
    let f = &s.frame;
    let (ps, m, tp) = (f.patch_size, f.merge_size, f.temporal_patch_size);
    let Some(first) = frames.first() else { return Err(unsuitable("no frames were decoded".into())) };
    if frames.iter().any(|fr| fr.dimensions() != first.dimensions()) {
        return Err(unsuitable("its frames differ in size".into()));
    }
    if frames.len().div_ceil(tp) != grid[0] {
        return Err(EngineError::Internal(format!("{} frames for {} temporal patches", frames.len(), grid[0])));
    }
    let (rh, rw) = (grid[1] * ps, grid[2] * ps);
    let resized: Vec<RgbImage> = frames
        .iter()
        .map(|fr| if fr.dimensions() == (rw as u32, rh as u32) { fr.clone() } else { resize_like_torch_bicubic(fr, rw as u32, rh as u32) })
        .collect();
    let scale = channel_scales(f);
    let patch_dim = 3 * tp * ps * ps;
    let mut values = Vec::with_capacity(grid.iter().product::<usize>() * patch_dim);
    for group in 0..grid[0] {
        // The last frame fills the final group.
        let frames: Vec<&[u8]> = (0..tp).map(|k| resized[(group * tp + k).min(resized.len() - 1)].as_raw().as_slice()).collect();
        for block_row in 0..grid[1] / m {
            for block_col in 0..grid[2] / m {
                for in_row in 0..m {
                    for in_col in 0..m {
                        let (top, left) = ((block_row * m + in_row) * ps, (block_col * m + in_col) * ps);
                        for (c, scale) in scale.iter().enumerate() {
                            for raw in &frames {
                                for y in top..top + ps {
                                    for x in left..left + ps {
                                        values.push(scale(raw[(y * rw + x) * 3 + c]));
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(VideoPatches { values, grid, patch_dim })
}

/// Per channel, a uint8 value to the tower's input as transformers' torchvision backend computes
/// it: with both rescale and normalise, one fused normalisation in float32 by `mean / factor` and
/// `std / factor` (float32 tensors times a float64 scalar); rescale alone multiplies in float32.
fn channel_scales(f: &ImageSettings) -> [Box<dyn Fn(u8) -> f32>; 3] {
    std::array::from_fn(|c| {
        let inverse = (1.0 / f.rescale_factor) as f32;
        let (mean, std) = (f.image_mean[c] as f32, f.image_std[c] as f32);
        let factor = f.rescale_factor as f32;
        match (f.do_rescale, f.do_normalize) {
            (true, true) => {
                let (mean, std) = (mean * inverse, std * inverse);
                Box::new(move |v: u8| (v as f32 - mean) / std) as Box<dyn Fn(u8) -> f32>
            }
            (false, true) => Box::new(move |v: u8| (v as f32 - mean) / std),
            (true, false) => Box::new(move |v: u8| v as f32 * factor),
            (false, false) => Box::new(|v: u8| v as f32),
        }
    })
}

fn unsuitable(detail: String) -> EngineError {
    EngineError::media("video", MediaProblem::Unsuitable { detail })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> VideoSettings {
        VideoSettings {
            frame: ImageSettings { max_pixels: 16384, ..crate::model::families::qwen3_vl::processor::tests::settings() },
            do_sample_frames: true,
            fps: Some(2.0),
            num_frames: None,
            min_frames: 4,
            max_frames: 768,
            cap_pixels_per_frame: false,
            max_video_tokens: 768,
        }
    }

    fn info(frames: u64, fps: f64, width: u32, height: u32) -> VideoInfo {
        VideoInfo { codec: "GIF".into(), mime: "image/gif", width, height, frames, fps, seconds: frames as f64 / fps, rotation: 0 }
    }

    #[test]
    fn frames_are_sampled_as_the_reference_samples_them() {
        let s = settings();
        // 10 frames at 10 fps: 2 wanted, 4 at least.
        assert_eq!(sample_frames(&info(10, 10.0, 72, 40), &s).unwrap(), [0, 3, 6, 9]);
        // 30 s at 30 fps: 60 frames over 900, linspace rounded (halves to even).
        let many = sample_frames(&info(900, 30.0, 72, 40), &s).unwrap();
        assert_eq!((many.len(), many[0], many[1], *many.last().unwrap()), (60, 0, 15, 899));
        // Fewer frames than the minimum: every frame.
        assert_eq!(sample_frames(&info(3, 10.0, 72, 40), &s).unwrap(), [0, 1, 2]);
        // np.linspace(0, 5, 4).round() = [0, 2, 3, 5] (1.666 → 2, 3.333 → 3).
        assert_eq!(linspace_rounded(5, 4), [0, 2, 3, 5]);
        // np.linspace(0, 9, 3) = [0, 4.5, 9] → 4.5 rounds to 4.
        assert_eq!(linspace_rounded(9, 3), [0, 4, 9]);
    }

    #[test]
    fn group_times_average_each_temporal_patch() {
        assert_eq!(group_seconds(&[0, 3, 6, 9], 10.0, 2), [0.15, 0.75]);
        // An odd count repeats the last frame.
        assert_eq!(group_seconds(&[0, 4, 8], 4.0, 2), [0.5, 2.0]);
        let text: Vec<String> = group_seconds(&[0, 3, 6, 9], 10.0, 2).iter().map(|t| format!("{t:.1}")).collect();
        assert_eq!(text, ["0.1", "0.8"], "Python's `{{:.1f}}`: 0.15 is below a half, 0.75 ties to even");
    }

    #[test]
    fn smart_resize_counts_every_frame() {
        let s = settings();
        assert_eq!(smart_resize(4, 40, 72, &s).unwrap(), (32, 64));
        // 8 frames of 32 × 64 fill 16384 pixels exactly; 10 are over: shrunk.
        assert_eq!(smart_resize(8, 40, 72, &s).unwrap(), (32, 64));
        assert_eq!(smart_resize(10, 40, 72, &s).unwrap(), (16, 48));
        // One frame is not a temporal patch.
        assert!(smart_resize(1, 40, 72, &s).is_err());
        // Smaller than one block: scaled up first.
        assert_eq!(smart_resize(4, 10, 40, &s).unwrap(), (16, 64));
        let mut capped = settings();
        capped.cap_pixels_per_frame = true;
        // min(768 × 256, 16384 // 4) = 4096 per frame.
        assert_eq!(smart_resize(4, 40, 72, &capped).unwrap(), (32, 64));
        assert_eq!(smart_resize(4, 80, 144, &capped).unwrap(), (32, 80));
    }

    #[test]
    fn layout_gives_grid_tokens_and_times() {
        let l = layout(&info(10, 10.0, 72, 40), &settings()).unwrap();
        assert_eq!(l.grid, [2, 4, 8]);
        assert_eq!(l.group_tokens, [8, 8]);
        assert_eq!(l.frames, [0, 3, 6, 9]);
        assert!(layout(&info(1, 10.0, 72, 40), &settings()).is_err());
    }
}
