//! The defaults a person can change, in one place: the engine's option structs, the CLI's flags
//! and the app's Settings all start from these.

/// Memory for conversation (prefix) caches, MiB.
pub const PREFIX_CACHE_MEMORY_MIB: usize = 2048;
/// Disk for conversation caches, MiB: kept across restarts.
pub const PREFIX_CACHE_DISK_MIB: u64 = 8192;
/// Memory for vision/audio tower outputs, MiB. One image is typically 256–1k tokens × 1–4k
/// dims in 16-bit: 0.5–8 MB.
pub const ENCODER_CACHE_MEMORY_MIB: usize = 512;
/// Disk for tower outputs, MiB.
pub const ENCODER_CACHE_DISK_MIB: u64 = 2048;
/// Prompt tokens per prefill chunk: small enough that a long prompt does not stall the other
/// requests' decoding for long, large enough to run at the matmul rate (mlx-lm uses 2048).
pub const PREFILL_CHUNK_TOKENS: usize = 512;

/// Chat sampling (`SamplingParams::chat`) when a model ships no generation_config.json (GGUF
/// files), and the app's initial settings: focused settings that small models stay coherent
/// with (SmolLM2's card suggests temperature 0.2, top-p 0.9). No repetition penalty, as in
/// mlx-lm and the OpenAI API: it changes even greedy replies; people who want one set it.
pub const CHAT_TEMPERATURE: f32 = 0.3;
pub const CHAT_TOP_P: f32 = 0.9;
pub const CHAT_TOP_K: i32 = 40;
pub const CHAT_MIN_P: f32 = 0.05;
pub const CHAT_REPETITION_PENALTY: f32 = 1.0;

/// The most tokens a reply may have unless a request or the settings say otherwise.
pub const REPLY_TOKENS: u32 = 1024;
/// The most tokens one reply may ask for in the settings; the model's context is the real bound.
pub const MAX_REPLY_TOKENS: u32 = 131_072;

// The limits on attachments (and every other limit on untrusted input) are `confab_limits`'.

/// The memory running requests may take (their keys/values at their longest, and one prefill
/// chunk's activations) unless set otherwise (`--memory-budget`; the app sets it from its own settings): this
/// share of physical memory left after the loaded weights. Half: on a Mac the window, the
/// system, the conversation cache (`PREFIX_CACHE_MEMORY_MIB`) and MLX's buffer cache share the
/// same memory, and a request that waits is better than a process the system kills.
pub const MEMORY_BUDGET_SHARE: f64 = 0.5;
