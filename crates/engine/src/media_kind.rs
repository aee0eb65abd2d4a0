//! The kinds of media a model may read. A module of its own because errors name them, and the
//! media code returns those errors (`crate::media` re-exports it).

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum MediaKind {
    Image,
    Audio,
    /// Moving pictures (MP4/MOV, animated GIF or WebP), read as sampled frames.
    Video,
}
