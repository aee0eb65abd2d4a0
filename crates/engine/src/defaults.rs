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
