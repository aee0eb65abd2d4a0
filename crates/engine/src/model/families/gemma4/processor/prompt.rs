//! Prompts with images and audio, as `Gemma4Processor` builds them: each image placeholder in
//! the rendered chat text (`<|image|>`) becomes begin-of-image, one image token per soft token,
//! end-of-image (`<|image>` + `<|image|>` × n + `<image|>`), and each audio placeholder the
//! same with the audio tokens. The model later overwrites the soft tokens' embeddings with the
//! towers' outputs, so for every item we report where its soft tokens are.

use std::path::Path;

use serde_json::Value;

use crate::error::{EngineError, Result};
use crate::media::MediaKind;
use crate::model::media::expanded_prompt::{ExpandedPrompt, SoftTokenSpan};
use crate::text::Tokenizer;

/// The marker strings, from the tokenizer's config (`tokenizer_config.json` names them
/// `image_token`, `boi_token`, ...); the defaults are Gemma 4's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaTokens {
    pub image: String,
    pub boi: String,
    pub eoi: String,
    pub audio: String,
    pub boa: String,
    pub eoa: String,
}

impl Default for MediaTokens {
    fn default() -> Self {
        Self {
            image: "<|image|>".into(),
            boi: "<|image>".into(),
            eoi: "<image|>".into(),
            audio: "<|audio|>".into(),
            boa: "<|audio>".into(),
            eoa: "<audio|>".into(),
        }
    }
}

impl MediaTokens {
    /// Reads `tokenizer_config.json` in `dir` (top-level keys, or an `extra_special_tokens`
    /// object); names it does not give keep their defaults. No file means the defaults.
    pub fn from_folder(dir: &Path) -> Result<Self> {
        let path = dir.join("tokenizer_config.json");
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(EngineError::io(&path, e)),
        };
        let json: Value =
            serde_json::from_str(&text).map_err(|e| EngineError::Tokenizer(format!("{}: not valid JSON ({e})", path.display())))?;
        let extra = json.get("extra_special_tokens").filter(|v| v.is_object());
        let lookup = |name: &str, default: &mut String| {
            let found = json.get(name).or_else(|| extra.and_then(|e| e.get(name)));
            let content = match found {
                Some(Value::String(s)) => Some(s.clone()),
                Some(Value::Object(o)) => o.get("content").and_then(Value::as_str).map(str::to_owned),
                _ => None,
            };
            if let Some(content) = content {
                *default = content;
            }
        };
        let mut tokens = Self::default();
        lookup("image_token", &mut tokens.image);
        lookup("boi_token", &mut tokens.boi);
        lookup("eoi_token", &mut tokens.eoi);
        lookup("audio_token", &mut tokens.audio);
        lookup("boa_token", &mut tokens.boa);
        lookup("eoa_token", &mut tokens.eoa);
        Ok(tokens)
    }

    fn placeholder(&self, kind: MediaKind) -> &str {
        match kind {
            MediaKind::Image => &self.image,
            MediaKind::Audio => &self.audio,
            // Gemma 4 reads no video: an empty placeholder is never found in a prompt.
            MediaKind::Video => "",
        }
    }

    /// (begin, soft, end) marker strings for a kind of media.
    fn markers(&self, kind: MediaKind) -> [&str; 3] {
        match kind {
            MediaKind::Image => [&self.boi, &self.image, &self.eoi],
            MediaKind::Audio => [&self.boa, &self.audio, &self.eoa],
            MediaKind::Video => ["", "", ""],
        }
    }
}

/// Expands the placeholders in `rendered` (the chat template's output) and tokenizes it.
/// `image_tokens[i]` is the soft-token count of the i-th image placeholder (from
/// [`super::preprocess_image`]), `audio_tokens[i]` that of the i-th audio placeholder. The
/// whole expanded text is tokenized at once, as the processor does, then each item's soft
/// tokens are found in the ids.
pub fn expand_prompt(
    tokenizer: &Tokenizer,
    tokens: &MediaTokens,
    rendered: &str,
    image_tokens: &[usize],
    audio_tokens: &[usize],
) -> Result<ExpandedPrompt> {
    let placeholders = find_placeholders(rendered, tokens);
    for (kind, given) in [(MediaKind::Image, image_tokens.len()), (MediaKind::Audio, audio_tokens.len())] {
        let found = placeholders.iter().filter(|p| p.1 == kind).count();
        if found != given {
            return Err(EngineError::Template(format!(
                "the prompt has {found} {} placeholders (`{}`) but {given} were attached",
                kind_name(kind),
                tokens.placeholder(kind)
            )));
        }
    }

    let mut text = String::with_capacity(rendered.len() + 10 * image_tokens.iter().chain(audio_tokens).sum::<usize>());
    let mut items = Vec::with_capacity(placeholders.len());
    let (mut last, mut images, mut clips) = (0, 0, 0);
    for &(at, kind) in &placeholders {
        let (index, counts) = match kind {
            MediaKind::Image => (&mut images, image_tokens),
            MediaKind::Audio => (&mut clips, audio_tokens),
            MediaKind::Video => continue,
        };
        let n = counts[*index];
        let [begin, soft, end] = tokens.markers(kind);
        text.push_str(&rendered[last..at]);
        text.push_str(begin);
        (0..n).for_each(|_| text.push_str(soft));
        text.push_str(end);
        last = at + tokens.placeholder(kind).len();
        items.push((kind, *index, n));
        *index += 1;
    }
    text.push_str(&rendered[last..]);

    let ids = tokenizer.encode_prompt(&text)?;
    let spans = locate(&ids, &items, tokenizer, tokens)?;
    Ok(ExpandedPrompt { ids, spans })
}

/// Byte offsets and kinds of the placeholders, in order.
fn find_placeholders(text: &str, tokens: &MediaTokens) -> Vec<(usize, MediaKind)> {
    let mut found: Vec<(usize, MediaKind)> = [MediaKind::Image, MediaKind::Audio]
        .into_iter()
        .filter(|&kind| !tokens.placeholder(kind).is_empty())
        .flat_map(|kind| text.match_indices(tokens.placeholder(kind)).map(move |(at, _)| (at, kind)))
        .collect();
    // Leftmost first, the longer one where two start together; drop any overlapping an
    // earlier one (only possible when one marker string contains the other).
    found.sort_by_key(|&(at, kind)| (at, std::cmp::Reverse(tokens.placeholder(kind).len())));
    let mut end = 0;
    found.retain(|&(at, kind)| {
        let keep = at >= end;
        if keep {
            end = at + tokens.placeholder(kind).len();
        }
        keep
    });
    found
}

/// Finds each item's begin marker, soft tokens and end marker in `ids`, in order.
fn locate(ids: &[u32], items: &[(MediaKind, usize, usize)], tokenizer: &Tokenizer, tokens: &MediaTokens) -> Result<Vec<SoftTokenSpan>> {
    let id = |token: &str| {
        tokenizer
            .token_to_id(token)
            .ok_or_else(|| EngineError::Tokenizer(format!("the vocabulary has no `{token}` token, which Gemma 4 prompts need")))
    };
    let mut spans = Vec::with_capacity(items.len());
    let mut cursor = 0;
    for &(kind, index, len) in items {
        let [begin, soft, end] = tokens.markers(kind).map(id);
        let (begin, soft, end) = (begin?, soft?, end?);
        let is_run = |p: usize| {
            ids.get(p) == Some(&begin)
                && ids.get(p + 1..p + 1 + len).is_some_and(|run| run.iter().all(|&t| t == soft))
                && ids.get(p + 1 + len) == Some(&end)
        };
        let at = (cursor..ids.len()).find(|&p| is_run(p)).ok_or_else(|| {
            EngineError::Tokenizer(format!("{} {} did not tokenize to its markers and {len} soft tokens", kind_name(kind), index + 1))
        })?;
        spans.push(SoftTokenSpan { kind, index, start: at + 1, len });
        cursor = at + len + 2;
    }
    Ok(spans)
}

fn kind_name(kind: MediaKind) -> &'static str {
    match kind {
        MediaKind::Image => "image",
        MediaKind::Audio => "audio",
        MediaKind::Video => "video",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_found_in_order_without_overlaps() {
        let tokens = MediaTokens::default();
        let found = find_placeholders("a<|audio|>b<|image|><|image|>", &tokens);
        assert_eq!(found, [(1, MediaKind::Audio), (11, MediaKind::Image), (20, MediaKind::Image)]);
        let nested = MediaTokens { audio: "<|image|>x".into(), ..MediaTokens::default() };
        assert_eq!(find_placeholders("<|image|>x <|image|>", &nested), [(0, MediaKind::Audio), (11, MediaKind::Image)]);
    }
}
