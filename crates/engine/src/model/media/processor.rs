//! What the runtime needs from a model family's media side: which kinds it reads, how many soft
//! tokens an item takes (for a video: which frames, in groups of how many tokens), the prompt
//! with its placeholders expanded, and an item's rows from its towers. A family plugs its
//! processor and towers in through a thin adapter (its registry entry's encoder loader returns
//! one); the runtime does the rest (decoding files, the encoder cache, splicing tower outputs
//! into the prompt's embeddings).

use mlx_rs::Array;

use crate::error::{EngineError, Result};
use crate::media::{MediaKind, RgbImage, Video, VideoInfo};
use crate::model::media::expanded_prompt::{ExpandedPrompt, SoftTokenSpan, TokenPositions, VideoLayout};
use crate::text::Tokenizer;

pub trait MediaProcessor {
    /// The towers' identity for the encoder cache: the model fingerprint and every
    /// preprocessing parameter that changes a tower's input. Outputs cached under one identity
    /// are never served to another.
    fn identity(&self) -> String;
    /// Whether a tower for this kind is loaded.
    fn reads(&self, kind: MediaKind) -> bool;
    /// The rate (Hz) clips are decoded at for `audio_soft_tokens` and `embed_audio`.
    fn sampling_rate(&self) -> u32;
    /// Soft tokens a `width × height` image takes in the prompt, without its pixels.
    fn image_soft_tokens(&self, width: u32, height: u32) -> Result<usize>;
    /// Soft tokens a clip takes (mono samples at `sampling_rate`); 0 when it is too short.
    fn audio_soft_tokens(&self, samples: &[f32]) -> usize;
    /// How a video with these headers is laid out: the frames the processor samples, the soft
    /// tokens and time of each group of frames the tower reads together, its grid.
    fn video_layout(&self, _info: &VideoInfo) -> Result<VideoLayout> {
        Err(EngineError::invalid("input", "this model reads no video"))
    }
    /// Every parameter that decides which frames of a video are read and at what size (frame
    /// rate, frame bounds, pixel budget): part of a video's encoder-cache key beside its content.
    fn video_sampling(&self) -> String {
        String::new()
    }
    /// Tokenizes `rendered` (the chat template's output) with each media placeholder expanded
    /// to its soft tokens: `image_tokens[i]` for the i-th image placeholder, `audio_tokens[i]`
    /// for the i-th audio one, `videos[i]`'s frame groups (with whatever text the model puts
    /// between them) for the i-th video one. Returns the ids and where each run of soft tokens
    /// is (one per image or clip, one per frame group of a video).
    fn expand_prompt(
        &self,
        tokenizer: &Tokenizer,
        rendered: &str,
        image_tokens: &[usize],
        audio_tokens: &[usize],
        videos: &[VideoLayout],
    ) -> Result<ExpandedPrompt>;
    /// `expand_prompt`, given each image's `(width, height)` as displayed too (in placeholder
    /// order), for processors that lay an image's soft tokens out by its shape (rows closed by
    /// a break token, say); the default leaves the sizes aside.
    fn expand_prompt_sized(
        &self,
        tokenizer: &Tokenizer,
        rendered: &str,
        image_tokens: &[usize],
        _image_sizes: &[(u32, u32)],
        audio_tokens: &[usize],
        videos: &[VideoLayout],
    ) -> Result<ExpandedPrompt> {
        self.expand_prompt(tokenizer, rendered, image_tokens, audio_tokens, videos)
    }
    /// Each token's position along several axes, for models that place media in more than one
    /// dimension (multimodal RoPE); `None` (the default) when token i sits at position i.
    /// `image_sizes[i]` is the i-th image's `(width, height)` as displayed, `videos[i]` the
    /// i-th video's layout.
    fn token_positions(
        &self,
        _ids: &[u32],
        _spans: &[SoftTokenSpan],
        _image_sizes: &[(u32, u32)],
        _videos: &[VideoLayout],
    ) -> Result<Option<TokenPositions>> {
        Ok(None)
    }
    /// One decoded image → its rows in the text model's embedding space: `[soft_tokens, hidden]`,
    /// or `[1 + k, soft_tokens, hidden]` where the model also adds k more sets of rows to the
    /// hidden states after its first k decoder layers (deepstack): see `EmbeddingsInput`.
    fn embed_image(&self, image: &RgbImage) -> Result<Array>;
    /// One clip (samples at `sampling_rate`) → `[soft_tokens, hidden]` rows.
    fn embed_audio(&self, samples: &[f32]) -> Result<Array>;
    /// One video's decoded frames (those `layout.frames` names, in order) → its rows for every
    /// frame group in order, shaped as `embed_image`'s.
    fn embed_video(&self, _video: &Video, _layout: &VideoLayout) -> Result<Array> {
        Err(EngineError::invalid("input", "this model reads no video"))
    }
}

/// The defaults transformers' image processors share (`BaseImageProcessor`, CLIP's mean and
/// standard deviation, Pillow's bicubic filter), for the families' processor configs.
pub(crate) mod image_defaults {
    pub fn yes() -> bool {
        true
    }
    pub fn rescale() -> f64 {
        1.0 / 255.0
    }
    pub fn clip_mean() -> [f64; 3] {
        [0.48145466, 0.4578275, 0.40821073]
    }
    pub fn clip_std() -> [f64; 3] {
        [0.26862954, 0.26130258, 0.27577711]
    }
    /// Pillow's filter number for bicubic.
    pub fn bicubic() -> u32 {
        3
    }
}
