//! A chat prompt with images, audio clips and videos, as token ids and where each item sits.
//!
//! Each message's media go to the chat template as a content list (the media parts, then the
//! text), so the template emits its placeholders; the placeholders are then expanded to each
//! item's soft tokens. Counting soft tokens needs an image's size (from its header), a clip's
//! length (decoded: the container's duration is not exact) and a video's headers (size, frames,
//! frame rate: the model's processor says which frames it reads); an image's pixels and a
//! video's frames are decoded later, and only when the tower output is not cached.

use std::ops::Range;

use serde_json::{json, Value};

use crate::cache::{MediaSpan, PrefixKey};
use crate::error::{EngineError, MediaProblem, Result};
use crate::media::{decode_audio, probe, MediaItem, MediaKind, MediaLimits, MediaSource, VideoReader};
use crate::model::media::expanded_prompt::{SoftTokenSpan, TokenPositions, VideoLayout};
use crate::model::MediaProcessor;
use crate::runtime::ready_model::ReadyModel;
use crate::text::{ChatMessage, ChatOptions, PromptEnd};

/// A prompt with media: its ids, and each item with its soft tokens' place.
pub struct MediaPrompt {
    pub ids: Vec<u32>,
    /// In prompt order.
    pub items: Vec<PromptItem>,
    /// Every token's position along several axes, where the model's processor places media so.
    pub positions: Option<TokenPositions>,
    /// Where its videos' frames are read from when their towers run.
    pub video_reader: std::sync::Arc<dyn VideoReader>,
}

/// One image, clip or video of a prompt.
pub struct PromptItem {
    pub kind: MediaKind,
    /// Where its bytes are read from when its tower runs: a file, or bytes in memory.
    pub source: MediaSource,
    /// The file's name, for errors and plans.
    pub file: String,
    /// The content hash.
    pub hash: String,
    /// Its first soft token's position in `MediaPrompt::ids` and how many soft tokens it has.
    pub span: SoftTokenSpan,
    /// Where its soft tokens are: one run for an image or clip, one per frame group for a video
    /// (the model's text, such as timestamps, between them). The tower's rows follow them in order.
    pub runs: Vec<Range<usize>>,
    /// A clip's samples at the model's rate (decoded to count its soft tokens); images and
    /// videos are decoded when their tower runs.
    pub samples: Option<Vec<f32>>,
    /// A video's frames and frame groups, as the model's processor laid them out.
    pub video: Option<VideoLayout>,
}

impl PromptItem {
    /// The positions it spans, from its first soft token to its last (for a video, the text
    /// between its frame groups too).
    pub fn range(&self) -> Range<usize> {
        self.span.start..self.runs.last().map_or(self.span.start + self.span.len, |r| r.end)
    }

    pub fn media_span(&self) -> MediaSpan {
        MediaSpan { position: self.span.start, hash: self.hash.clone() }
    }
}

impl MediaPrompt {
    /// The prefix cache's identity for the first `tokens` of this prompt (or of the sequence
    /// that continues it).
    pub fn prefix_key(&self, fingerprint: &str, tokens: Vec<u32>) -> PrefixKey {
        PrefixKey { fingerprint: fingerprint.to_string(), tokens, media: self.items.iter().map(PromptItem::media_span).collect() }
    }

    /// `reused` moved back to the start of any media item it falls inside: an item's soft
    /// tokens are computed together (an image's see each other both ways).
    pub fn reusable(&self, reused: usize) -> usize {
        self.items.iter().filter(|i| i.span.start < reused && reused < i.range().end).map(|i| i.span.start).min().unwrap_or(reused)
    }
}

/// Checks that the model reads every attached kind, before any file is touched.
pub fn check_capabilities(model: &ReadyModel, messages: &[ChatMessage]) -> Result<()> {
    let (vision, audio, video) = (model.info.vision, model.info.audio, model.info.video);
    for item in messages.iter().flat_map(|m| &m.media) {
        let readable = match item.kind {
            MediaKind::Image => vision,
            MediaKind::Audio => audio,
            MediaKind::Video => video,
        };
        if !readable || model.encoder.is_none() {
            return Err(EngineError::ModelCannotRead { model: model.info.architecture.clone(), kind: item.kind, vision, audio, video });
        }
    }
    Ok(())
}

/// Renders (ending as `end` says), measures and expands a conversation with media.
pub fn build(
    model: &ReadyModel,
    messages: &[ChatMessage],
    end: PromptEnd,
    chat: &ChatOptions,
    limits: &MediaLimits,
) -> Result<MediaPrompt> {
    check_capabilities(model, messages)?;
    let encoder = model.encoder.as_deref().expect("checked above: the model has towers");
    let template = model
        .template
        .as_ref()
        .ok_or_else(|| EngineError::Template("this model has no chat template, which prompts with media need".into()))?;

    let mut measured = Vec::new();
    for item in messages.iter().flat_map(|m| &m.media) {
        measured.push(measure(item, encoder, model.video_reader.as_ref(), limits)?);
    }
    let counts = |kind| measured.iter().filter(|m: &&Measured| m.kind == kind).map(|m| m.soft_tokens).collect::<Vec<_>>();
    let final_text = messages.last().map_or("", |m| m.content.as_str());
    let rendered = template.render_prompt(&content_lists(messages), final_text, end, chat)?;
    let videos: Vec<VideoLayout> = measured.iter().filter_map(|m| m.video.clone()).collect();
    let image_sizes: Vec<(u32, u32)> = measured.iter().filter_map(|m| m.size).collect();
    let expanded = encoder.expand_prompt_sized(
        &model.tokenizer,
        &rendered,
        &counts(MediaKind::Image),
        &image_sizes,
        &counts(MediaKind::Audio),
        &videos,
    )?;
    let positions = encoder.token_positions(&expanded.ids, &expanded.spans, &image_sizes, &videos)?;

    // The n-th item of a kind in the spans is the n-th attached item of that kind; a video's
    // frame groups are consecutive spans of one item.
    let mut by_kind: [Vec<Option<Measured>>; 3] = [vec![], vec![], vec![]];
    let slot = |kind: MediaKind| kind as usize;
    for m in measured {
        by_kind[slot(m.kind)].push(Some(m));
    }
    let mut items: Vec<PromptItem> = Vec::new();
    for &span in &expanded.spans {
        let run = span.start..span.start + span.len;
        if let Some(last) = items.last_mut().filter(|i| i.kind == span.kind && i.span.index == span.index) {
            last.span.len += span.len;
            last.runs.push(run);
            continue;
        }
        let m = by_kind[slot(span.kind)].get_mut(span.index).and_then(Option::take).ok_or_else(|| {
            EngineError::Internal(format!("the prompt places {:?} {} twice or never attached it", span.kind, span.index + 1))
        })?;
        items.push(PromptItem {
            kind: m.kind,
            source: m.source,
            file: m.file,
            hash: m.hash,
            span,
            runs: vec![run],
            samples: m.samples,
            video: m.video,
        });
    }
    if let Some(missing) = by_kind.iter().flatten().flatten().next() {
        return Err(EngineError::Internal(format!("{} has no place in the prompt", missing.file)));
    }
    Ok(MediaPrompt { ids: expanded.ids, items, positions, video_reader: model.video_reader.clone() })
}

/// What an item needs before expansion: its identity and soft-token count.
struct Measured {
    kind: MediaKind,
    source: MediaSource,
    file: String,
    hash: String,
    soft_tokens: usize,
    samples: Option<Vec<f32>>,
    /// An image's `(width, height)`.
    size: Option<(u32, u32)>,
    video: Option<VideoLayout>,
}

fn measure(item: &MediaItem, encoder: &dyn MediaProcessor, videos: &dyn VideoReader, limits: &MediaLimits) -> Result<Measured> {
    let file = item.file_name();
    let mut video = None;
    let (soft_tokens, samples, size) = match item.kind {
        MediaKind::Image => {
            let info = probe(&item.source, limits)?;
            // An animated GIF/WebP probes as a video; sent as an image it is its first frame
            // (what `decode_image` gives), as before video support.
            let still = info.kind == MediaKind::Image || (info.kind == MediaKind::Video && info.mime.starts_with("image/"));
            let (true, Some(width), Some(height)) = (still, info.width, info.height) else {
                return Err(EngineError::media(&file, MediaProblem::UnsupportedImage));
            };
            let n = encoder.image_soft_tokens(width, height).map_err(|e| named(e, &file))?;
            (n, None, Some((width, height)))
        }
        MediaKind::Audio => {
            let audio = decode_audio(&item.source, encoder.sampling_rate(), limits)?;
            let n = encoder.audio_soft_tokens(&audio.samples);
            if n == 0 {
                let detail = "the clip is too short for the model".to_string();
                return Err(EngineError::media(&file, MediaProblem::Unsuitable { detail }));
            }
            (n, Some(audio.samples), None)
        }
        MediaKind::Video => {
            let info = videos.probe(&item.source, limits)?;
            let layout = encoder.video_layout(&info).map_err(|e| named(e, &file))?;
            tracing::debug!(file = %file, frames = info.frames, fps = info.fps, sampled = layout.frames.len(), grid = ?layout.grid, "video layout");
            let n = layout.soft_tokens();
            video = Some(layout);
            (n, None, None)
        }
    };
    Ok(Measured { kind: item.kind, source: item.source.clone(), file, hash: item.content_hash()?, soft_tokens, samples, size, video })
}

/// Preprocessing errors say "image"/"audio"/"video"; the person wants the file's name.
pub(crate) fn named(error: EngineError, file: &str) -> EngineError {
    match error {
        EngineError::Media { problem, .. } => EngineError::media(file, problem),
        other => other,
    }
}

/// Messages as the template sees them: plain content, or a list of the media parts then the text.
fn content_lists(messages: &[ChatMessage]) -> Vec<Value> {
    messages
        .iter()
        .map(|m| {
            // Every field as the template reads it (tool calls, reasoning), the media as parts.
            // Serialised without the items: bytes in memory would be written out in base64 only
            // to be dropped.
            let mut plain = m.clone();
            plain.media.clear();
            let mut message = serde_json::to_value(&plain).unwrap_or_else(|_| json!({ "role": m.role, "content": m.content }));
            if let Some(fields) = message.as_object_mut().filter(|_| !m.media.is_empty()) {
                let mut parts: Vec<Value> = m.media.iter().map(|item| json!({ "type": kind_name(item.kind) })).collect();
                if !m.content.is_empty() {
                    parts.push(json!({ "type": "text", "text": m.content }));
                }
                fields.insert("content".into(), Value::Array(parts));
            }
            message
        })
        .collect()
}

fn kind_name(kind: MediaKind) -> &'static str {
    match kind {
        MediaKind::Image => "image",
        MediaKind::Audio => "audio",
        MediaKind::Video => "video",
    }
}
