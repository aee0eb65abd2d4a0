//! A model ready to serve: weights, tokenizer, chat template, stop ids, sampling defaults.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use mlx_rs::Array;

use crate::constraint::Grammars;
use crate::error::{EngineError, Result};
use crate::media::{FileVideos, MediaKind, VideoReader};
use crate::model::embedding::{EmbeddingHead, EmbeddingInfo};
use crate::model::MediaProcessor;
use crate::model::{self, registry, Format, LoadOptions, LoadedCheckpoint, TextConfig};
use crate::runtime::count::TokenCounter;
use crate::sample::SamplingParams;
use crate::state::{quantized_kinds, KvPlan, KvQuantization, SequenceState, StateKind};
use crate::text::{ChatTemplate, ReplyFormat, Tokenizer};

pub struct ReadyModel {
    pub model: Box<dyn model::TextModel>,
    pub tokenizer: Tokenizer,
    /// Shared with the `TokenCounter`s handed out (runtime/count.rs).
    pub template: Option<Arc<ChatTemplate>>,
    /// Every id that ends a reply: config.json, generation_config.json and the tokenizer's.
    pub eos_ids: Vec<u32>,
    pub info: ModelInfo,
    /// The vision and audio towers, for models that have them.
    pub encoder: Option<Box<dyn MediaProcessor>>,
    /// Pooling, Dense layers and normalization, for embedding models (which give vectors, not
    /// replies).
    pub embedding: Option<EmbeddingHead>,
    /// Where its prompts' videos are read from (their files, unless the engine was given
    /// another reader: `EngineOptions::video_reader`).
    pub video_reader: Arc<dyn VideoReader>,
    /// How its replies mark reasoning and tool calls (from its chat template).
    pub reply_format: ReplyFormat,
    /// The special tokens of that markup, kept in the text of requests that read it.
    pub markup_ids: Arc<std::collections::BTreeSet<u32>>,
    /// The precision its full keys/values layers hold their state in (`LoadOptions::kv_quantization`).
    pub kv: KvPlan,
    /// The vocabulary as constrained decoding sees it, built by the first request with a
    /// constraint (most models never serve one); the error, when it cannot be built.
    grammars: OnceLock<std::result::Result<Arc<Grammars>, String>>,
    /// What MLX held more after loading it than before: its weights, as resident (set by the
    /// engine, which loads one model at a time).
    pub weights_bytes: usize,
    /// Its recurrent and convolution state for one sequence, measured on first need.
    fixed_state: OnceLock<usize>,
}

/// What the app, the CLI and the server know and show about a loaded model (the window gets it
/// as is: `ModelState::loaded`).
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ModelInfo {
    /// As the picker shows it (`discover::display_name`).
    pub name: String,
    pub path: PathBuf,
    pub architecture: String,
    pub format: Format,
    pub dtype: String,
    /// Weights kept quantized in memory (false when dequantized at load).
    pub quantized: bool,
    pub context_length: usize,
    pub vocab_size: usize,
    /// The weights' fingerprint, with the keys/values precision where quantized
    /// (`cache::key::state_fingerprint`): the caches' identity for this model.
    pub fingerprint: String,
    pub parameters: u64,
    /// What its weights (and towers) took in memory when it loaded, measured then.
    pub weights_bytes: u64,
    /// The quantization its keys and values are held in; `None`: the compute dtype.
    pub kv_quantization: Option<KvQuantization>,
    /// Why layers keep full-precision keys and values though a quantization was asked for.
    pub kv_quantization_declined: Option<String>,
    /// From generation_config.json where the model has one (`SamplingParams::model_defaults`);
    /// a request's sampling is these with its choices over them (`SamplingParams::with_choices`).
    #[serde(skip)]
    pub default_sampling: SamplingParams,
    /// Reads images (a vision tower is loaded).
    pub vision: bool,
    /// Reads audio clips (an audio tower is loaded).
    pub audio: bool,
    /// Reads videos (its vision tower and a video processor are loaded).
    pub video: bool,
    /// How its replies mark reasoning and tool calls.
    #[serde(skip)]
    pub reply_format: ReplyFormat,
    /// The markup of that format its vocabulary has as single tokens, with their ids: call
    /// grammars name these by id (`ReplyFormat::call_grammar`).
    #[serde(skip)]
    pub markup_tokens: Vec<(&'static str, u32)>,
    /// Its chat template turns reasoning on and off with the `enable_thinking` switch
    /// (as thinking models' templates do): the app offers that switch per chat.
    pub thinking_switch: bool,
    /// Its chat template reads `reasoning_effort` (gpt-oss's harmony template writes it as
    /// "Reasoning: low|medium|high"): the app offers the effort.
    pub reasoning_effort: bool,
    /// An embedding model (sentence-transformers files in its folder): it gives vectors
    /// (`Engine::embed`), not replies.
    pub embedding: Option<EmbeddingInfo>,
    /// A model that writes by denoising canvases: the canvas loop's parameters, from its
    /// checkpoint (the same for every request).
    pub denoising: Option<crate::model::DenoisingParams>,
}

/// Progress of a load, for the app's progress bar.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LoadProgress {
    pub stage: &'static str,
    pub fraction: f32,
}

impl ReadyModel {
    pub fn config(&self) -> &TextConfig {
        self.model.config()
    }

    /// A fresh sequence's state, in the keys/values precision the model was loaded with.
    pub fn new_state(&self) -> SequenceState {
        SequenceState::new(&self.state_kinds())
    }

    /// Each layer's state kind, in the keys/values precision the model was loaded with.
    pub fn state_kinds(&self) -> Vec<StateKind> {
        quantized_kinds(self.model.state_kinds(), self.kv.quantization)
    }

    /// The bytes one sequence's recurrent and convolution layers hold: fixed whatever its
    /// length, and shaped by the family, so measured once, on a fresh state after one token
    /// (0 for models without such layers; a forward that fails counts 0 and is logged).
    pub fn fixed_state_bytes(&self) -> usize {
        *self.fixed_state.get_or_init(|| {
            let fixed = |kind: &StateKind| matches!(kind, StateKind::Recurrent | StateKind::Convolution);
            if !self.state_kinds().iter().any(fixed) {
                return 0;
            }
            let mut state = self.new_state();
            let measured = self.model.logits(&Array::from_slice(&[0i32], &[1, 1]), &mut state).and_then(|_| {
                mlx_rs::transforms::eval(state.arrays())?;
                Ok(state.bytes())
            });
            match measured {
                Ok(bytes) => bytes.recurrent + bytes.convolution,
                Err(e) => {
                    tracing::warn!("could not measure the recurrent state's size: {e}");
                    0
                }
            }
        })
    }

    /// The model's token environment for constrained decoding, built on first use.
    pub fn grammars(&self) -> Result<Arc<Grammars>> {
        let built = self.grammars.get_or_init(|| {
            Grammars::new(&self.tokenizer, self.config().vocab_size, &self.eos_ids).map(Arc::new).map_err(|e| e.to_string())
        });
        built.clone().map_err(|e| EngineError::invalid("constraint", e))
    }

    /// Counts text-only prompts as this model would see them, on any thread.
    pub fn token_counter(&self) -> TokenCounter {
        TokenCounter::new(self.tokenizer.clone(), self.template.clone())
    }

    pub fn load(path: &Path, options: &LoadOptions, progress: &mut dyn FnMut(LoadProgress)) -> Result<Self> {
        let _in_span = tracing::info_span!("load", path = %path.display()).entered();
        let began = std::time::Instant::now();
        let ready = Self::load_unlogged(path, options, progress);
        match &ready {
            Ok(m) => tracing::info!(
                architecture = %m.info.architecture,
                format = ?m.info.format,
                dtype = %m.info.dtype,
                parameters = m.info.parameters,
                vision = m.info.vision,
                audio = m.info.audio,
                video = m.info.video,
                ms = began.elapsed().as_millis() as u64,
                "loaded"
            ),
            Err(e) => tracing::info!("could not load: {e}"),
        }
        ready
    }

    fn load_unlogged(path: &Path, options: &LoadOptions, progress: &mut dyn FnMut(LoadProgress)) -> Result<Self> {
        progress(LoadProgress { stage: "reading weights", fraction: 0.05 });
        let weights_progress = &mut |share: f32| progress(LoadProgress { stage: "reading weights", fraction: 0.05 + 0.85 * share });
        let LoadedCheckpoint { model, path, format, fingerprint, dtype, quantized, gguf } =
            model::load_with_progress(path, options, weights_progress)?;
        progress(LoadProgress { stage: "reading tokenizer", fraction: 0.9 });
        let tokenizer = match &gguf {
            Some(file) => Tokenizer::from_gguf(file, &path)?,
            None => Tokenizer::from_hf_folder(&path)?,
        };
        let template = ChatTemplate::for_tokenizer(&tokenizer)?.map(Arc::new);
        let reply_format = ReplyFormat::detect(template.as_deref().map(ChatTemplate::source));
        let markup_ids = reply_format
            .markup()
            .into_iter()
            .filter_map(|text| tokenizer.token_to_id(text).filter(|&id| tokenizer.is_special(id)))
            .collect();
        let grammar_special = crate::constraint::special_ids(&tokenizer);
        let markup_tokens = reply_format
            .markup()
            .into_iter()
            .filter_map(|text| Some((text, tokenizer.token_to_id(text).filter(|id| grammar_special.contains(id))?)))
            .collect();
        let generation_config = read_generation_config(&path, format)?;
        let defaults = SamplingParams::model_defaults(generation_config.as_ref())?;
        let config = model.config();
        let kv = KvPlan::new(&model.state_kinds(), config.head_dim, options.kv_quantization);
        if let Some(why) = &kv.declined {
            tracing::info!(why = %why, "keys/values quantization: some layers keep full precision");
        }
        let fingerprint = crate::cache::key::state_fingerprint(&fingerprint, kv.quantization);
        let mut eos_ids = config.eos_token_ids.clone();
        let extra = generation_config.as_ref().map(|g| model::config::token_ids(g.get("eos_token_id"))).unwrap_or_default();
        for id in extra.into_iter().chain(tokenizer.eos_id()) {
            if !eos_ids.contains(&id) {
                eos_ids.push(id);
            }
        }
        let embedding = match format {
            Format::Safetensors => EmbeddingHead::read(&path, config.hidden_size)?,
            Format::Gguf => None,
        };
        if embedding.is_some() && !model.accepts().whole_sequences {
            return Err(EngineError::ModelFormat {
                path: path.clone(),
                reason: format!("an embedding model of architecture `{}`, which Confab cannot run as one yet", config.arch),
            });
        }
        let info = ModelInfo {
            name: model::discover::display_name(&path),
            path: path.clone(),
            architecture: config.arch.clone(),
            format,
            dtype: format!("{dtype:?}").to_lowercase(),
            quantized,
            context_length: config.max_position,
            vocab_size: config.vocab_size,
            fingerprint,
            parameters: model::parameter_count(config),
            weights_bytes: 0,
            kv_quantization: kv.quantization,
            kv_quantization_declined: kv.declined.clone(),
            default_sampling: defaults,
            vision: false,
            audio: false,
            video: false,
            reply_format,
            markup_tokens,
            thinking_switch: template.as_deref().is_some_and(|t| t.source().contains("enable_thinking")),
            reasoning_effort: template.as_deref().is_some_and(|t| t.source().contains("reasoning_effort")),
            embedding: embedding.as_ref().map(EmbeddingHead::info),
            denoising: model.denoiser().map(|d| d.params().clone()),
        };
        let video_reader: Arc<dyn VideoReader> = Arc::new(FileVideos);
        let mut ready = Self {
            model,
            tokenizer,
            template,
            eos_ids,
            info,
            encoder: None,
            embedding,
            video_reader,
            reply_format,
            markup_ids: Arc::new(markup_ids),
            kv,
            grammars: OnceLock::new(),
            weights_bytes: 0,
            fixed_state: OnceLock::new(),
        };
        // The family's vision and audio towers, where it has them (from Hugging Face folders).
        let load_encoder = registry::family(&ready.info.architecture).and_then(|f| f.encoder);
        if let (Some(load_encoder), Format::Safetensors) = (load_encoder, format) {
            progress(LoadProgress { stage: "reading vision and audio towers", fraction: 0.95 });
            if let Some(encoder) = load_encoder(&path, dtype)? {
                ready.attach_encoder(encoder);
            }
        }
        progress(LoadProgress { stage: "ready", fraction: 1.0 });
        Ok(ready)
    }

    /// Plugs in the model's vision and audio towers; `info` then advertises what they read.
    pub fn attach_encoder(&mut self, encoder: Box<dyn MediaProcessor>) {
        self.info.vision = encoder.reads(MediaKind::Image);
        self.info.audio = encoder.reads(MediaKind::Audio);
        self.info.video = encoder.reads(MediaKind::Video);
        self.encoder = Some(encoder);
    }
}

fn read_generation_config(path: &Path, format: Format) -> Result<Option<serde_json::Value>> {
    let file = path.join("generation_config.json");
    if format != Format::Safetensors || !file.is_file() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&file).map_err(|e| EngineError::io(&file, e))?;
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| EngineError::ModelFormat { path: file, reason: format!("generation_config.json is not valid JSON ({e})") })
}
