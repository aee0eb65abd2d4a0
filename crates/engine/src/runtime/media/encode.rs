//! Tower outputs for a prompt's media: nothing for items the reused prefix already holds,
//! the encoder cache for the rest, and the towers only for what the cache lacks. Looking up
//! is cheap and happens before the plan; the towers run after it.

use std::collections::HashMap;

use mlx_rs::Array;

use crate::cache::{EncoderCache, EncoderKey, EncoderSource};
use crate::error::{EngineError, Result};
use crate::media::{decode_image, MediaKind, MediaLimits};
use crate::model::MediaProcessor;
use crate::runtime::media::prompt::{named, MediaPrompt, PromptItem};
use crate::runtime::request::{EncoderUse, MediaPlan};

/// Per item, how its output is obtained and (once known) the output.
pub struct MediaOutputs {
    pub uses: Vec<EncoderUse>,
    outputs: Vec<Option<Array>>,
}

impl MediaOutputs {
    /// Looks every item past `reused` up in the encoder cache. An item repeated within the
    /// prompt is looked up once: its later copies share the first one's output.
    pub fn lookup(prompt: &MediaPrompt, reused: usize, encoder: &dyn MediaProcessor, cache: &mut EncoderCache) -> Self {
        let tower = encoder.identity();
        let mut seen: HashMap<(MediaKind, &str), usize> = HashMap::new();
        let mut uses = Vec::with_capacity(prompt.items.len());
        let mut outputs = Vec::with_capacity(prompt.items.len());
        for (i, item) in prompt.items.iter().enumerate() {
            if item.range().end <= reused {
                uses.push(EncoderUse::Prefix);
                outputs.push(None);
                continue;
            }
            if let Some(&first) = seen.get(&(item.kind, item.hash.as_str())) {
                uses.push(if uses[first] == EncoderUse::Miss { EncoderUse::Memory } else { uses[first] });
                outputs.push(outputs[first].clone());
                continue;
            }
            seen.insert((item.kind, &item.hash), i);
            let found = cache.lookup(&key(&tower, item, encoder));
            tracing::debug!(kind = ?item.kind, file = %item.file, source = found.source.as_str(), "encoder cache");
            uses.push(match found.source {
                EncoderSource::Memory => EncoderUse::Memory,
                EncoderSource::Disk => EncoderUse::Disk,
                EncoderSource::Miss => EncoderUse::Miss,
            });
            outputs.push(found.output);
        }
        Self { uses, outputs }
    }

    /// Tower runs still to do.
    pub fn misses(&self) -> usize {
        self.outputs.iter().zip(&self.uses).filter(|(o, u)| o.is_none() && **u == EncoderUse::Miss).count()
    }

    /// Runs the towers for every miss (once per distinct item) and keeps their outputs in the
    /// encoder cache.
    pub fn run_towers(
        &mut self,
        prompt: &MediaPrompt,
        encoder: &dyn MediaProcessor,
        cache: &mut EncoderCache,
        limits: &MediaLimits,
    ) -> Result<()> {
        let tower = encoder.identity();
        for (i, item) in prompt.items.iter().enumerate() {
            if self.uses[i] == EncoderUse::Prefix || self.outputs[i].is_some() {
                continue;
            }
            let began = std::time::Instant::now();
            let output = encode(item, encoder, prompt, limits)?;
            output.eval()?;
            tracing::info!(kind = ?item.kind, file = %item.file, soft_tokens = item.span.len, ms = began.elapsed().as_millis() as u64, "tower run");
            cache.insert(key(&tower, item, encoder), output.clone());
            for j in i..prompt.items.len() {
                let same = prompt.items[j].kind == item.kind && prompt.items[j].hash == item.hash;
                if same && self.uses[j] != EncoderUse::Prefix {
                    self.outputs[j] = Some(output.clone());
                }
            }
        }
        Ok(())
    }

    /// The item's tower output, `[soft_tokens, hidden]`; `None` for items in the reused prefix.
    pub fn output(&self, item: usize) -> Option<&Array> {
        self.outputs[item].as_ref()
    }

    /// The plan's view of the items.
    pub fn plan(&self, prompt: &MediaPrompt) -> Vec<MediaPlan> {
        prompt
            .items
            .iter()
            .zip(&self.uses)
            .map(|(item, &encoder)| MediaPlan {
                kind: item.kind,
                file: item.file.clone(),
                hash: item.hash.chars().take(12).collect(),
                position: item.span.start,
                soft_tokens: item.span.len,
                frames: item.video.as_ref().map(|v| v.frames.len()),
                encoder,
            })
            .collect()
    }
}

/// An item's encoder-cache key: the tower's identity and the content hash, and for a video also
/// what decides which frames are read at what size (the processor's sampling parameters and
/// the frames and grid they gave), so another sampling of the same file is another entry.
fn key(tower: &str, item: &PromptItem, encoder: &dyn MediaProcessor) -> EncoderKey {
    match &item.video {
        Some(layout) => EncoderKey::new(
            tower,
            format!("{} video [{}] frames {:?} grid {:?}", item.hash, encoder.video_sampling(), layout.frames, layout.grid),
        ),
        None => EncoderKey::new(tower, item.hash.clone()),
    }
}

/// Preprocesses one item and runs its tower; checks it gives one row per soft token.
fn encode(item: &PromptItem, encoder: &dyn MediaProcessor, prompt: &MediaPrompt, limits: &MediaLimits) -> Result<Array> {
    // Preprocessing errors say "image"/"audio"/"video"; the tower's are not media errors.
    let output = match item.kind {
        MediaKind::Image => {
            let image = decode_image(&item.source, limits)?;
            encoder.embed_image(&image).map_err(|e| named(e, &item.file))?
        }
        MediaKind::Audio => {
            let samples = item.samples.as_deref().unwrap_or_default();
            encoder.embed_audio(samples).map_err(|e| named(e, &item.file))?
        }
        MediaKind::Video => {
            let layout = item.video.as_ref().ok_or_else(|| EngineError::Internal(format!("{}: a video without its layout", item.file)))?;
            let video = prompt.video_reader.decode(&item.source, &layout.frames, limits)?;
            encoder.embed_video(&video, layout).map_err(|e| named(e, &item.file))?
        }
    };
    // [rows, hidden], or [1 + k, rows, hidden] with rows for k decoder layers too.
    let rows = if output.ndim() >= 2 { output.dim(output.ndim() as i32 - 2) as usize } else { 0 };
    if !(output.ndim() == 2 || output.ndim() == 3) || rows != item.span.len {
        return Err(EngineError::Internal(format!(
            "{}: the tower gave {:?} for {} soft tokens; the model's towers and preprocessing disagree",
            item.file,
            output.shape(),
            item.span.len
        )));
    }
    Ok(output)
}
