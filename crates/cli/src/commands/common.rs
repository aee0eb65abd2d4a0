//! What every model-running command shares: which model, in which dtype, on a started engine.

use std::path::PathBuf;

use anyhow::Context;
use confab_engine::defaults;
use confab_engine::KvQuantization;
use confab_engine::MediaItem;
use confab_engine::{BatchOptions, Engine, EngineOptions, MemoryBudget, ModelId, ModelInfo};
use confab_engine::{DtypeChoice, LoadOptions};
use confab_engine::{EncoderOptions, PrefixOptions};
use confab_paths::{AppPaths, DefaultModel};

#[derive(clap::Args, Clone)]
pub struct ModelArgs {
    /// A model folder or GGUF file, also a blob of Ollama's store (default: the default model
    /// in the app's models folder).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// auto (float32 on a CPU, the checkpoint's dtype on a GPU), float32, bfloat16 or float16.
    #[arg(long, default_value = "auto")]
    pub dtype: DtypeChoice,
    /// Hold keys and values quantized to 4 or 8 bits (as mlx-lm's `--kv-bits`), from the first
    /// token; layers whose state is a rotating window or recurrent keep full precision.
    #[arg(long, value_name = "BITS")]
    pub kv_bits: Option<u8>,
    /// Elements per scale and bias when keys and values are quantized: 32, 64 or 128.
    #[arg(long, value_name = "N", default_value_t = KvQuantization::DEFAULT_GROUP_SIZE, requires = "kv_bits")]
    pub kv_group_size: u32,
    /// Memory that running requests may hold together (their keys/values at their longest and
    /// a prompt chunk's activations): a size such as 4GB or 512MB, or a share of the memory
    /// left after the model's weights such as 60% (default 50%). A request that does not fit
    /// waits its turn; one that could never fit is refused, saying what to change.
    #[arg(long, value_name = "SIZE|SHARE")]
    pub memory_budget: Option<MemoryBudget>,
    #[command(flatten)]
    pub cache: CacheArgs,
}

/// The prefix (session) cache: on by default, in the app's cache folder.
#[derive(clap::Args, Clone)]
pub struct CacheArgs {
    /// Don't reuse or keep conversation caches.
    #[arg(long)]
    pub no_prefix_cache: bool,
    /// Memory for conversation caches, in MiB.
    #[arg(long, default_value_t = defaults::PREFIX_CACHE_MEMORY_MIB)]
    pub prefix_cache_memory_mib: usize,
    /// Disk for conversation caches, in MiB.
    #[arg(long, default_value_t = defaults::PREFIX_CACHE_DISK_MIB)]
    pub prefix_cache_disk_mib: u64,
    /// Folder for conversation caches (default: <cache folder>/prefix).
    #[arg(long)]
    pub prefix_cache_dir: Option<PathBuf>,
    /// Don't reuse or keep vision/audio tower outputs.
    #[arg(long)]
    pub no_encoder_cache: bool,
    /// Memory for tower outputs, in MiB.
    #[arg(long, default_value_t = defaults::ENCODER_CACHE_MEMORY_MIB)]
    pub encoder_cache_memory_mib: usize,
    /// Disk for tower outputs, in MiB.
    #[arg(long, default_value_t = defaults::ENCODER_CACHE_DISK_MIB)]
    pub encoder_cache_disk_mib: u64,
    /// Folder for tower outputs (default: <cache folder>/encoder).
    #[arg(long)]
    pub encoder_cache_dir: Option<PathBuf>,
}

impl CacheArgs {
    pub fn options(&self) -> PrefixOptions {
        PrefixOptions {
            enabled: !self.no_prefix_cache,
            memory_budget: self.prefix_cache_memory_mib << 20,
            disk_budget: self.prefix_cache_disk_mib << 20,
            dir: Some(self.prefix_cache_dir.clone().unwrap_or_else(|| AppPaths::from_env().cache_dir.join("prefix"))),
            ..PrefixOptions::default()
        }
    }
}

impl CacheArgs {
    pub fn encoder_options(&self) -> EncoderOptions {
        EncoderOptions {
            enabled: !self.no_encoder_cache,
            memory_budget: self.encoder_cache_memory_mib << 20,
            disk_budget: self.encoder_cache_disk_mib << 20,
            dir: Some(self.encoder_cache_dir.clone().unwrap_or_else(|| AppPaths::from_env().cache_dir.join("encoder"))),
        }
    }
}

/// Images, audio clips and videos to send with the (first) user message.
#[derive(clap::Args, Clone, Default)]
pub struct MediaArgs {
    /// An image to send with the message (repeatable).
    #[arg(long = "image", value_name = "PATH")]
    pub images: Vec<PathBuf>,
    /// An audio clip to send with the message (repeatable).
    #[arg(long = "audio", value_name = "PATH")]
    pub audio: Vec<PathBuf>,
    /// A video to send with the message (repeatable): MP4/MOV (H.264; HEVC on macOS), animated GIF or WebP.
    #[arg(long = "video", value_name = "PATH")]
    pub videos: Vec<PathBuf>,
}

impl MediaArgs {
    pub fn is_empty(&self) -> bool {
        self.images.is_empty() && self.audio.is_empty() && self.videos.is_empty()
    }

    /// The images, then the clips, then the videos.
    pub fn items(&self) -> Vec<MediaItem> {
        let images = self.images.iter().map(MediaItem::image);
        images.chain(self.audio.iter().map(MediaItem::audio)).chain(self.videos.iter().map(MediaItem::video)).collect()
    }
}

impl ModelArgs {
    pub fn path(&self) -> PathBuf {
        self.model.clone().unwrap_or_else(|| DefaultModel::manifest().path(&AppPaths::from_env()))
    }

    /// How to load the model: its dtype and keys/values precision (a `--kv-bits` or group size
    /// MLX cannot quantize to is refused here, before anything loads).
    pub fn load_options(&self) -> anyhow::Result<LoadOptions> {
        let kv_quantization = self.kv_bits.map(|bits| KvQuantization::new(bits, self.kv_group_size)).transpose()?;
        Ok(LoadOptions { dtype: self.dtype, kv_quantization, ..Default::default() })
    }

    /// Starts an engine and loads the model, with progress on stderr when `verbose`.
    pub fn load(&self, verbose: bool) -> anyhow::Result<(Engine, ModelId, ModelInfo)> {
        let batch = BatchOptions { memory_budget: self.memory_budget, ..Default::default() };
        let options = EngineOptions { prefix: self.cache.options(), encoder: self.cache.encoder_options(), batch, ..Default::default() };
        let load_options = self.load_options()?;
        let engine = Engine::start(options)?;
        let path = self.path();
        let options = load_options;
        let (id, info) = engine
            .load(&path, options, move |p| {
                if verbose {
                    eprintln!("loading: {} ({:.0}%)", p.stage, p.fraction * 100.0);
                }
            })
            .with_context(|| format!("loading {}", path.display()))?;
        Ok((engine, id, info))
    }
}
