//! A prompt with its media placeholders expanded to soft tokens, as a family's processor makes
//! it: the ids, and where each item's soft tokens are (the model later replaces their
//! embeddings with the towers' outputs).

use crate::media::MediaKind;

/// Where one media item's soft tokens are in the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SoftTokenSpan {
    pub kind: MediaKind,
    /// Which image (or clip) this is, counting that kind's placeholders from the start.
    pub index: usize,
    /// Position of the first soft token (just after the begin marker).
    pub start: usize,
    /// Number of soft tokens.
    pub len: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpandedPrompt {
    pub ids: Vec<u32>,
    /// One per placeholder, in prompt order.
    pub spans: Vec<SoftTokenSpan>,
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
