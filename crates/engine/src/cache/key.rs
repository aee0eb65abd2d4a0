//! A cached sequence's identity and how far it can serve a request: shared by the prefix
//! cache's memory tier (`prefix`) and its disk tier (`disk`).
//!
//! Identity = model fingerprint + token ids + the content hash of every media item and where
//! it sits (placeholder tokens look alike for different images, so tokens alone are not enough).
//! The model fingerprint includes the precision its keys and values are held in
//! ([`state_fingerprint`]), so a quantized and a full-precision state never serve each other.

use crate::state::KvQuantization;

/// A loaded model's identity for the caches: its weights' fingerprint, and the keys/values
/// quantization its state uses where it uses one.
pub fn state_fingerprint(weights: &str, kv_quantization: Option<KvQuantization>) -> String {
    match kv_quantization {
        Some(q) => format!("{weights}+kv{}g{}", q.bits, q.group_size),
        None => weights.to_string(),
    }
}

/// A media item in a prompt: its first token position and its content hash.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct MediaSpan {
    pub position: usize,
    pub hash: String,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PrefixKey {
    pub fingerprint: String,
    pub tokens: Vec<u32>,
    pub media: Vec<MediaSpan>,
}

impl PrefixKey {
    /// How many leading positions this key shares with another of the same model: the common
    /// token prefix, cut before the first media item whose content differs.
    pub fn shared_len(&self, other: &PrefixKey) -> usize {
        if self.fingerprint != other.fingerprint {
            return 0;
        }
        let tokens = self.tokens.iter().zip(&other.tokens).take_while(|(a, b)| a == b).count();
        let unmatched = |a: &[MediaSpan], b: &[MediaSpan]| -> Option<usize> {
            a.iter().filter(|m| m.position < tokens && !b.contains(m)).map(|m| m.position).min()
        };
        [Some(tokens), unmatched(&self.media, &other.media), unmatched(&other.media, &self.media)].into_iter().flatten().min().unwrap_or(0)
    }
}

/// How far a cached sequence can serve a request sharing `shared` positions with it (at most
/// `allowed(shared)`): cut back where its state allows, else the latest checkpoint before.
/// Returns the position and, for a checkpoint resume, its index.
pub(crate) fn resume_point(trimmable: bool, len: usize, checkpoints: &[usize], shared: usize) -> (usize, Option<usize>) {
    if trimmable || shared == len {
        return (shared, None);
    }
    match checkpoints.iter().enumerate().filter(|(_, &p)| p <= shared).max_by_key(|(_, &p)| p) {
        Some((i, &p)) => (p, Some(i)),
        None => (0, None),
    }
}
