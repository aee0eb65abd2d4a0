//! Raw bindings to mlx-c 0.7.0, linked against the official MLX 0.32.2 shared library.
//!
//! Same API as the registry's `mlx-sys` 0.7.0 (which mlx-rs 0.33 is written against); see
//! `build.rs` for where the sources and the library come from.
#![allow(non_upper_case_globals)]
#![allow(non_camel_case_types)]
#![allow(non_snake_case)]
#![allow(clippy::all)]

include!(concat!(env!("OUT_DIR"), "/bindings.rs"));

/// An IEEE half as its bit pattern. On arm64 bindgen produces this newtype from `__fp16`;
/// elsewhere mlx-c has no half type, so it is declared here with the same shape.
#[cfg(not(target_arch = "aarch64"))]
#[repr(transparent)]
#[derive(Debug, Default, Copy, Clone, PartialEq, Eq, Hash)]
pub struct float16_t(pub u16);

/// Where the linked libmlx lives and which wheel it came from, fixed at build time.
pub mod build_info {
    /// Folder holding libmlx (and mlx.metallib on macOS) as built against.
    pub const MLX_LIB_DIR: &str = env!("CONFAB_MLX_LIB_DIR");
    /// `cpu`, `metal` or `cuda-12`.
    pub const MLX_BACKEND: &str = env!("CONFAB_MLX_BACKEND");
    /// The MLX version of the wheel.
    pub const MLX_VERSION: &str = env!("CONFAB_MLX_VERSION");
}
