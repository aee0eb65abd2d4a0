//! A prompt with its media placeholders expanded to soft tokens, as a family's processor makes
//! it: the ids, and where each item's soft tokens are (the model later replaces their
//! embeddings with the towers' outputs).

use crate::media::MediaKind;

/// Where one run of a media item's soft tokens is in the prompt: an image or clip has one run, a
/// video one per group of frames its tower reads together (text, its timestamps, between them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SoftTokenSpan {
    pub kind: MediaKind,
    /// Which image (or clip, or video) this is, counting that kind's placeholders from the start.
    pub index: usize,
    /// Position of the first soft token (just after the begin marker).
    pub start: usize,
    /// Number of soft tokens.
    pub len: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpandedPrompt {
    pub ids: Vec<u32>,
    /// One per run of soft tokens, in prompt order: one per image or clip placeholder, one per
    /// frame group of a video.
    pub spans: Vec<SoftTokenSpan>,
}

/// How a model's processor lays one video out, from its headers alone (`MediaProcessor::
/// video_layout`): which frames it reads, and the soft tokens and time of each group of frames
/// its tower reads together. The runtime decodes `frames` and hands the layout back.
#[derive(Debug, Clone, PartialEq)]
pub struct VideoLayout {
    /// The sampled frame indices, ascending.
    pub frames: Vec<u64>,
    /// Soft tokens of each frame group, in order.
    pub group_tokens: Vec<usize>,
    /// Each frame group's time in seconds, as the prompt states it.
    pub group_seconds: Vec<f64>,
    /// The tower's grid (frame groups, rows, columns) in patches.
    pub grid: [usize; 3],
}

impl VideoLayout {
    /// Soft tokens of the whole video.
    pub fn soft_tokens(&self) -> usize {
        self.group_tokens.iter().sum()
    }
}

/// Each token's position along several axes, for models that place media in more than one
/// dimension (multimodal RoPE: time, height, width). Text advances every axis together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenPositions {
    pub axes: usize,
    /// Axis-major: `values[axis * len + i]` is token i's position on `axis`.
    pub values: Vec<i32>,
}

impl TokenPositions {
    /// Tokens counted.
    pub fn len(&self) -> usize {
        self.values.len() / self.axes.max(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Tokens `range` as an `[axes, range.len()]` int32 array.
    pub fn slice(&self, range: std::ops::Range<usize>) -> mlx_rs::Array {
        let len = self.len();
        let part: Vec<i32> = (0..self.axes).flat_map(|a| self.values[a * len + range.start..a * len + range.end].iter().copied()).collect();
        mlx_rs::Array::from_slice(&part, &[self.axes as i32, range.len() as i32])
    }
}
