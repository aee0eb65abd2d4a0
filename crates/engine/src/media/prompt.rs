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
