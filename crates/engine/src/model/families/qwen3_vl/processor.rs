//! Qwen3-VL's processor for images, as transformers 5.24's `Qwen3VLProcessor` with the Pillow
//! image processor (`Qwen2VLImageProcessorPil`) prepares them:
//!
//! - `smart_resize`: both sides to multiples of patch × merge, the pixel count into the budget,
//!   the aspect ratio kept as closely as that allows (Python's rounding: halves to even);
//! - Pillow's resize (bicubic by default), rescale in float64 stored as float32, normalise in
//!   float32;
//! - patches: each `patch × patch` square of every channel, repeated `temporal_patch_size`
//!   times (an image is one frame; a video's frames will fill the temporal patches instead),
//!   flattened as (channel, time, row, column), in merge-block order; the grid is
//!   (1, rows, columns) in patches;
//! - the prompt: each `<|image_pad|>` the chat template wrote becomes one per soft token
//!   (patches / merge²), each `<|vision_start|><|video_pad|><|vision_end|>` its frame groups
//!   with their times (`video`), the whole text tokenized at once;
//! - multimodal RoPE positions (`get_rope_index`): text advances all three axes by one; an
//!   image's tokens take (start, start + row, start + column) over the merged grid, and the
//!   text after it continues at start + max(rows, columns); a video's frame groups each do the
//!   same (separated by their timestamp text).

use crate::error::{EngineError, MediaProblem, Result};
use crate::media::pil_resize::{resize_like_pil, PilFilter};
use crate::media::{MediaKind, RgbImage};
use crate::model::media::expanded_prompt::{ExpandedPrompt, SoftTokenSpan, TokenPositions, VideoLayout};
use crate::text::Tokenizer;

use super::config::ImageSettings;

/// A preprocessed image: its patches and grid.
pub struct ImagePatches {
    /// [t × h × w, 3 × temporal × patch²], row-major.
    pub values: Vec<f32>,
    /// (t, h, w) in patches.
    pub grid: [usize; 3],
    pub patch_dim: usize,
}

/// The size (height, width) `smart_resize` gives a `height × width` image.
pub fn smart_resize(height: usize, width: usize, s: &ImageSettings) -> Result<(usize, usize)> {
    let factor = (s.patch_size * s.merge_size) as f64;
    let (h, w) = (height as f64, width as f64);
    if height == 0 || width == 0 {
        return Err(unsuitable("the image has no pixels".into()));
    }
    if h.max(w) / h.min(w) > 200.0 {
        return Err(unsuitable(format!("its aspect ratio {:.0}:1 is over the model's 200:1", h.max(w) / h.min(w))));
    }
    let mut h_bar = (h / factor).round_ties_even() * factor;
    let mut w_bar = (w / factor).round_ties_even() * factor;
    if h_bar * w_bar > s.max_pixels as f64 {
        let beta = (h * w / s.max_pixels as f64).sqrt();
        h_bar = factor.max((h / beta / factor).floor() * factor);
        w_bar = factor.max((w / beta / factor).floor() * factor);
    } else if h_bar * w_bar < s.min_pixels as f64 {
        let beta = (s.min_pixels as f64 / (h * w)).sqrt();
        h_bar = (h * beta / factor).ceil() * factor;
        w_bar = (w * beta / factor).ceil() * factor;
    }
    Ok((h_bar as usize, w_bar as usize))
}

fn unsuitable(detail: String) -> EngineError {
    EngineError::media("image", MediaProblem::Unsuitable { detail })
}

/// The patch grid (t, h, w) of a `height × width` image.
pub fn image_grid(height: usize, width: usize, s: &ImageSettings) -> Result<[usize; 3]> {
    let (h, w) = if s.do_resize { smart_resize(height, width, s)? } else { (height, width) };
    let unit = s.patch_size * s.merge_size;
    if h % unit != 0 || w % unit != 0 || h == 0 || w == 0 {
        return Err(unsuitable(format!("{w} × {h} pixels are not whole {unit}-pixel blocks")));
    }
    Ok([1, h / s.patch_size, w / s.patch_size])
}

/// Soft tokens of a grid.
pub fn grid_tokens(grid: [usize; 3], s: &ImageSettings) -> usize {
    grid.iter().product::<usize>() / (s.merge_size * s.merge_size)
}

/// An image as the tower's input.
pub fn preprocess_image(image: &RgbImage, s: &ImageSettings) -> Result<ImagePatches> {
    let (height, width) = (image.height() as usize, image.width() as usize);
    let grid = image_grid(height, width, s)?;
    let (rh, rw) = (grid[1] * s.patch_size, grid[2] * s.patch_size);
    let resized;
    let image = if (rh, rw) != (height, width) {
        let filter = PilFilter::from_pil(s.resample)
            .ok_or_else(|| EngineError::invalid("resample", format!("resampling filter {} is not supported", s.resample)))?;
        resized = resize_like_pil(image, rw as u32, rh as u32, filter);
        &resized
    } else {
        image
    };
    let scale: [Box<dyn Fn(u8) -> f32>; 3] = std::array::from_fn(|c| {
        let (rescale, factor, normalize) = (s.do_rescale, s.rescale_factor, s.do_normalize);
        let (mean, std) = (s.image_mean[c] as f32, s.image_std[c] as f32);
        Box::new(move |v: u8| {
            // transformers rescales in float64 and stores float32, then normalises in float32.
            let x = if rescale { (v as f64 * factor) as f32 } else { v as f32 };
            if normalize {
                (x - mean) / std
            } else {
                x
            }
        }) as Box<dyn Fn(u8) -> f32>
    });
    let (ps, m, tp) = (s.patch_size, s.merge_size, s.temporal_patch_size);
    let patch_dim = 3 * tp * ps * ps;
    let mut values = Vec::with_capacity(grid[1] * grid[2] * patch_dim);
    let raw = image.as_raw();
    for block_row in 0..grid[1] / m {
        for block_col in 0..grid[2] / m {
            for in_row in 0..m {
                for in_col in 0..m {
                    let (top, left) = ((block_row * m + in_row) * ps, (block_col * m + in_col) * ps);
                    for (c, scale) in scale.iter().enumerate() {
                        for _ in 0..tp {
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
    Ok(ImagePatches { values, grid, patch_dim })
}

/// The prompt's marker strings and ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VisionTokens {
    pub image: String,
    pub image_id: u32,
    pub video: String,
    pub video_id: u32,
    pub vision_start: String,
    pub vision_end: String,
}

/// One placeholder the chat template wrote, in text order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Placeholder {
    Image,
    Video,
}

/// Expands each image placeholder in `rendered` to `image_tokens[i]` copies and each video
/// placeholder to its frame groups (`<{t:.1f} seconds>`, vision start, the group's pads, vision
/// end), and tokenizes the whole text; each image's span is its run of placeholder ids, each
/// video frame group's likewise. A video placeholder the template wrapped in its own vision
/// start and end (`<|vision_start|><|video_pad|><|vision_end|>`, as Qwen3-VL's template writes
/// it) is replaced with its wrapper, as the processor Qwen3-VL was released with does (and
/// transformers 5.25 again: docs/media.md); a bare one alone.
pub fn expand_prompt(
    tokenizer: &Tokenizer,
    tokens: &VisionTokens,
    rendered: &str,
    image_tokens: &[usize],
    audio_tokens: &[usize],
    videos: &[VideoLayout],
) -> Result<ExpandedPrompt> {
    if !audio_tokens.is_empty() {
        return Err(EngineError::invalid("input", "Qwen3-VL reads no audio"));
    }
    // The placeholders in text order, and the text between them.
    let mut order = Vec::new();
    let mut pieces = Vec::new();
    let mut rest = rendered;
    loop {
        let image = rest.find(tokens.image.as_str());
        let video = rest.find(tokens.video.as_str());
        let (at, kind, len) = match (image, video) {
            (Some(i), Some(v)) if v < i => (v, Placeholder::Video, tokens.video.len()),
            (Some(i), _) => (i, Placeholder::Image, tokens.image.len()),
            (None, Some(v)) => (v, Placeholder::Video, tokens.video.len()),
            (None, None) => break,
        };
        let (mut before, mut after) = (&rest[..at], &rest[at + len..]);
        // The template's own markers around a video go: each frame group brings its own.
        if kind == Placeholder::Video {
            if let (Some(b), Some(a)) = (before.strip_suffix(tokens.vision_start.as_str()), after.strip_prefix(tokens.vision_end.as_str()))
            {
                (before, after) = (b, a);
            }
        }
        pieces.push(before);
        order.push(kind);
        rest = after;
    }
    let count = |k| order.iter().filter(|&&o| o == k).count();
    let (found_images, found_videos) = (count(Placeholder::Image), count(Placeholder::Video));
    if found_images != image_tokens.len() || found_videos != videos.len() {
        return Err(EngineError::Template(format!(
            "the prompt has {found_images} image placeholders (`{}`) and {found_videos} video placeholders (`{}`) but {} images and {} videos were attached",
            tokens.image,
            tokens.video,
            image_tokens.len(),
            videos.len()
        )));
    }
    // What each placeholder's soft tokens will be: (kind, item index, run length), in order.
    let mut runs: Vec<(MediaKind, usize, usize)> = Vec::new();
    let mut text = String::with_capacity(rendered.len() + 16 * image_tokens.iter().sum::<usize>());
    let (mut images, mut video_index) = (image_tokens.iter().enumerate(), 0);
    for (piece, kind) in pieces.iter().zip(&order) {
        text.push_str(piece);
        match kind {
            Placeholder::Image => {
                let (index, &n) = images.next().expect("counted above");
                (0..n).for_each(|_| text.push_str(&tokens.image));
                runs.push((MediaKind::Image, index, n));
            }
            Placeholder::Video => {
                let layout = &videos[video_index];
                if layout.group_tokens.len() != layout.group_seconds.len() {
                    return Err(EngineError::Internal(format!(
                        "video {}: {} frame groups but {} times",
                        video_index + 1,
                        layout.group_tokens.len(),
                        layout.group_seconds.len()
                    )));
                }
                for (&n, &seconds) in layout.group_tokens.iter().zip(&layout.group_seconds) {
                    text.push_str(&format!("<{seconds:.1} seconds>"));
                    text.push_str(&tokens.vision_start);
                    (0..n).for_each(|_| text.push_str(&tokens.video));
                    text.push_str(&tokens.vision_end);
                    runs.push((MediaKind::Video, video_index, n));
                }
                video_index += 1;
            }
        }
    }
    text.push_str(rest);
    let ids = tokenizer.encode_prompt(&text)?;
    let mut spans = Vec::with_capacity(runs.len());
    let mut at = 0;
    for (kind, index, n) in runs {
        let (id, name, what) = match kind {
            MediaKind::Video => (tokens.video_id, &tokens.video, "video"),
            _ => (tokens.image_id, &tokens.image, "image"),
        };
        let start = (at..ids.len())
            .find(|&p| ids[p] == id)
            .ok_or_else(|| EngineError::Tokenizer(format!("{what} {} did not tokenize to its {n} `{name}` tokens", index + 1)))?;
        let run = ids[start..].iter().take_while(|&&t| t == id).count();
        if run < n {
            return Err(EngineError::Tokenizer(format!("{what} {} tokenized to {run} `{name}` tokens, not {n}", index + 1)));
        }
        spans.push(SoftTokenSpan { kind, index, start, len: n });
        at = start + n;
    }
    Ok(ExpandedPrompt { ids, spans })
}

/// Every token's (time, height, width) position, given each span's grid in patches (a video
/// frame group's is (1, rows, columns): transformers splits a video's grid per group, as the
/// timestamps between them are text).
pub fn token_positions(len: usize, spans: &[SoftTokenSpan], grids: &[[usize; 3]], merge: usize) -> Result<TokenPositions> {
    let mut axes = [Vec::with_capacity(len), Vec::with_capacity(len), Vec::with_capacity(len)];
    let mut next: i64 = 0;
    let mut cursor = 0;
    let mut grids = grids.iter();
    for span in spans {
        let grid = grids.next().ok_or_else(|| EngineError::Internal("more media spans than grids".into()))?;
        let (t, h, w) = (grid[0], grid[1] / merge, grid[2] / merge);
        if t * h * w != span.len || span.start < cursor {
            return Err(EngineError::Internal(format!(
                "{:?} {} has {} soft tokens but a {t} × {h} × {w} grid",
                span.kind,
                span.index + 1,
                span.len
            )));
        }
        for _ in cursor..span.start {
            axes.iter_mut().for_each(|a| a.push(next as i32));
            next += 1;
        }
        for ti in 0..t {
            for hi in 0..h {
                for wi in 0..w {
                    axes[0].push((next + ti as i64) as i32);
                    axes[1].push((next + hi as i64) as i32);
                    axes[2].push((next + wi as i64) as i32);
                }
            }
        }
        next += h.max(w) as i64;
        cursor = span.start + span.len;
    }
    for _ in cursor..len {
        axes.iter_mut().for_each(|a| a.push(next as i32));
        next += 1;
    }
    Ok(TokenPositions { axes: 3, values: axes.concat() })
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A tiny tower's image settings (patch 8, merge 2), shared with the video tests.
    pub(in crate::model::families::qwen3_vl) fn settings() -> ImageSettings {
        ImageSettings {
            do_resize: true,
            do_rescale: true,
            do_normalize: true,
            rescale_factor: 1.0 / 255.0,
            image_mean: [0.5; 3],
            image_std: [0.5; 3],
            resample: 3,
            patch_size: 8,
            temporal_patch_size: 2,
            merge_size: 2,
            min_pixels: 512,
            max_pixels: 4096,
        }
    }

    #[test]
    fn smart_resize_follows_the_reference() {
        let s = settings();
        // Over the budget: shrunk; 2.5 blocks round to 2 (halves to even, as Python's round).
        assert_eq!(smart_resize(50, 90, &s).unwrap(), (32, 80));
        assert_eq!(smart_resize(100, 40, &s).unwrap(), (96, 32));
        // Under the minimum: grown.
        assert_eq!(smart_resize(10, 10, &s).unwrap(), (32, 32));
        assert!(smart_resize(1, 300, &s).is_err());
        assert!(smart_resize(0, 3, &s).is_err());
    }

    #[test]
    fn a_wrapped_video_placeholder_is_replaced_with_its_wrapper_and_a_bare_one_alone() {
        let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/reference/fixtures/tiny/qwen3_vl");
        let tokenizer = Tokenizer::from_hf_folder(folder).unwrap();
        let tokens = VisionTokens {
            image: "<|image_pad|>".into(),
            image_id: 5,
            video: "<|video_pad|>".into(),
            video_id: 6,
            vision_start: "<|vision_start|>".into(),
            vision_end: "<|vision_end|>".into(),
        };
        let video = VideoLayout { frames: vec![0, 3, 6, 9], group_tokens: vec![1, 1], group_seconds: vec![0.15, 0.75], grid: [2, 2, 2] };
        let groups = "<0.1 seconds><|vision_start|><|video_pad|><|vision_end|><0.8 seconds><|vision_start|><|video_pad|><|vision_end|>";
        let cases = [
            // The template's wrapper goes with the placeholder; an image keeps its own.
            (
                "a<|vision_start|><|image_pad|><|vision_end|><|vision_start|><|video_pad|><|vision_end|>b",
                format!("a<|vision_start|><|image_pad|><|image_pad|><|vision_end|>{groups}b"),
            ),
            // Two wrapped videos side by side, and a bare one (half a wrapper is no wrapper).
            ("<|vision_start|><|video_pad|><|vision_end|><|vision_start|><|video_pad|><|vision_end|>", format!("{groups}{groups}")),
            ("x<|video_pad|><|vision_end|>", format!("x{groups}<|vision_end|>")),
        ];
        for (rendered, want) in cases {
            let images = if rendered.contains("<|image_pad|>") { vec![2] } else { vec![] };
            let videos = vec![video.clone(); rendered.matches("<|video_pad|>").count()];
            let out = expand_prompt(&tokenizer, &tokens, rendered, &images, &[], &videos).unwrap();
            assert_eq!(tokenizer.decode(&out.ids, false).unwrap(), want, "{rendered}");
            assert_eq!(out.spans.iter().filter(|s| s.kind == MediaKind::Video).count(), 2 * videos.len());
        }
    }

    #[test]
    fn positions_follow_the_merged_grid() {
        let spans = [SoftTokenSpan { kind: MediaKind::Image, index: 0, start: 2, len: 6 }];
        let p = token_positions(10, &spans, &[[1, 4, 6]], 2).unwrap();
        let axis = |a: usize| p.values[a * 10..(a + 1) * 10].to_vec();
        assert_eq!(axis(0), [0, 1, 2, 2, 2, 2, 2, 2, 5, 6]);
        assert_eq!(axis(1), [0, 1, 2, 2, 2, 3, 3, 3, 5, 6]);
        assert_eq!(axis(2), [0, 1, 2, 3, 4, 2, 3, 4, 5, 6]);
    }
}
