//! The kinds of media a model may read. A module of its own because errors name them, and the
//! media code returns those errors.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum MediaKind {
    Image,
    Audio,
    /// Moving pictures (MP4/MOV, animated GIF or WebP), read as sampled frames.
    Video,
}

impl MediaKind {
    /// The kind of a stored attachment, from the MIME type it was stored under. Videos are
    /// stored as `video/*`, animated GIF and WebP included (`stored_mime`), so that a still GIF
    /// stays an image and a moving one reads as a video.
    pub fn of_mime(mime: &str) -> Option<Self> {
        match mime.split('/').next()? {
            "image" => Some(MediaKind::Image),
            "audio" => Some(MediaKind::Audio),
            "video" => Some(MediaKind::Video),
            _ => None,
        }
    }

    /// The MIME type to store a file of this kind under, given the one its format has.
    pub fn stored_mime(self, format_mime: &str) -> String {
        match (self, format_mime.split_once('/')) {
            (MediaKind::Video, Some((top, subtype))) if top != "video" => format!("video/{subtype}"),
            _ => format_mime.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::MediaKind;

    #[test]
    fn a_moving_gif_is_stored_as_a_video_and_read_back_as_one() {
        let stored = MediaKind::Video.stored_mime("image/gif");
        assert_eq!(stored, "video/gif");
        assert_eq!(MediaKind::of_mime(&stored), Some(MediaKind::Video));
        assert_eq!(MediaKind::Image.stored_mime("image/gif"), "image/gif");
        assert_eq!(MediaKind::Video.stored_mime("video/mp4"), "video/mp4");
        assert_eq!(MediaKind::of_mime("audio/mp4"), Some(MediaKind::Audio));
        assert_eq!(MediaKind::of_mime("application/pdf"), None);
    }
}
