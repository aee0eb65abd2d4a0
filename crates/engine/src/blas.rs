//! The BLAS that libmlx runs its CPU matmuls on: which library, which of its kernels, and how
//! fast, for `confab doctor`; and the fix for OpenBLAS taking a recent CPU for an old one.
//!
//! OpenBLAS picks its kernels ("core") once, when it is loaded, from the CPU's model number.
//! A release older than the CPU does not know the model and falls back to a generic core:
//! Debian's OpenBLAS 0.3.21 takes AVX-512 CPUs for a "Prescott" (SSE3) and runs float32
//! matmuls about five times slower than with its SkylakeX kernels. The core can only be chosen
//! before the library initialises (`OPENBLAS_CORETYPE`), and libmlx, which links it, is loaded
//! before `main`: so `run_on_the_right_blas_core` starts the program again, once, with the
//! core the CPU's features call for.

use std::ffi::{c_char, c_int, CStr};
use std::path::PathBuf;
use std::time::Instant;

use mlx_rs::{ops, random, Array};

use crate::error::Result;

extern "C" {
    fn confab_blas_describe(
        library: *mut c_char,
        library_len: usize,
        core: *mut c_char,
        core_len: usize,
        config: *mut c_char,
        config_len: usize,
    ) -> c_int;
}

/// What `confab doctor` reports about BLAS.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BlasInfo {
    /// The shared library providing `cblas_sgemm`.
    pub library: Option<PathBuf>,
    /// OpenBLAS's core (`openblas_get_corename`), e.g. `Haswell`; none for another BLAS.
    pub core: Option<String>,
    /// OpenBLAS's build description (`openblas_get_config`).
    pub config: Option<String>,
    /// `OPENBLAS_CORETYPE` as this process was started with (set by the user, or by
    /// `run_on_the_right_blas_core`).
    pub core_type_env: Option<String>,
    /// The core the CPU's features call for when OpenBLAS's own choice falls short of it.
    pub better_core: Option<&'static str>,
    /// A float32 matmul through MLX on its default device, in GFLOP/s.
    pub float32_gflops: f64,
}

impl BlasInfo {
    pub fn probe() -> Result<Self> {
        let found = loaded();
        Ok(Self {
            better_core: found.core.as_deref().and_then(|core| better_core(core, CpuLevel::detect())),
            library: found.library,
            core: found.core,
            config: found.config,
            core_type_env: std::env::var("OPENBLAS_CORETYPE").ok(),
            float32_gflops: float32_gflops()?,
        })
    }
}

struct Loaded {
    library: Option<PathBuf>,
    core: Option<String>,
    config: Option<String>,
}

fn loaded() -> Loaded {
    let (mut library, mut core, mut config) = ([0 as c_char; 4096], [0 as c_char; 128], [0 as c_char; 512]);
    // SAFETY: each buffer is writable for its length; the function writes NUL-terminated text
    // (empty when it does not know).
    unsafe {
        confab_blas_describe(library.as_mut_ptr(), library.len(), core.as_mut_ptr(), core.len(), config.as_mut_ptr(), config.len());
    }
    let text = |b: &[c_char]| {
        // SAFETY: NUL-terminated by confab_blas_describe (or still all zeros).
        let s = unsafe { CStr::from_ptr(b.as_ptr()) }.to_string_lossy().trim().to_string();
        (!s.is_empty()).then_some(s)
    };
    Loaded { library: text(&library).map(PathBuf::from), core: text(&core), config: text(&config) }
}

/// 2·n³ floating-point operations of an n×n float32 matmul through MLX, best of a few runs.
fn float32_gflops() -> Result<f64> {
    const N: i32 = 1024;
    let key = random::key(0)?;
    let a = random::normal::<f32>(&[N, N], None, None, Some(&key))?;
    let b = random::normal::<f32>(&[N, N], None, None, Some(&key))?;
    mlx_rs::transforms::eval([&a, &b])?;
    let mut best = f64::MAX;
    for _ in 0..4 {
        let start = Instant::now();
        let c: Array = ops::matmul(&a, &b)?;
        c.eval()?;
        best = best.min(start.elapsed().as_secs_f64());
    }
    Ok(2.0 * f64::from(N).powi(3) / best / 1e9)
}

/// The widest vector instructions the CPU (and the OS) supports, as OpenBLAS's cores use them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CpuLevel {
    Sse,
    Avx,
    Avx2,
    Avx512,
}

impl CpuLevel {
    pub fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            // What OpenBLAS's SkylakeX kernels use.
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512dq")
                && std::arch::is_x86_feature_detected!("avx512vl")
            {
                return Self::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                return Self::Avx2;
            }
            if std::arch::is_x86_feature_detected!("avx") {
                return Self::Avx;
            }
        }
        Self::Sse
    }
}

/// What an OpenBLAS x86-64 core uses (`openblas_get_corename`, lower case); None for a core
/// this table does not know (another architecture, or a newer name), which is left alone.
fn core_level(core: &str) -> Option<CpuLevel> {
    let core = core.to_ascii_lowercase();
    Some(match core.as_str() {
        "prescott" | "core2" | "penryn" | "dunnington" | "nehalem" | "atom" | "athlon" | "opteron" | "opteron_sse3"
        | "barcelona" | "bobcat" | "katmai" | "coppermine" | "northwood" | "banias" => CpuLevel::Sse,
        "sandybridge" | "bulldozer" | "piledriver" | "steamroller" | "excavator" => CpuLevel::Avx,
        "haswell" | "zen" => CpuLevel::Avx2,
        "skylakex" | "cooperlake" | "sapphirerapids" => CpuLevel::Avx512,
        _ => return None,
    })
}

/// The core to ask OpenBLAS for when the one it picked uses less of the CPU than the CPU has
/// (AVX2 or AVX-512 only: those are the kernels that matter, and every OpenBLAS since 0.3.0
/// has them).
pub fn better_core(detected: &str, cpu: CpuLevel) -> Option<&'static str> {
    let have = core_level(detected)?;
    if have >= cpu {
        return None;
    }
    match cpu {
        CpuLevel::Avx512 => Some("SkylakeX"),
        CpuLevel::Avx2 => Some("Haswell"),
        _ => None,
    }
}

/// Called first thing in `main` (the CLI and the app): when `OPENBLAS_CORETYPE` is unset and
/// OpenBLAS picked a core below what the CPU offers, starts this program again with the right
/// one (same arguments and environment, plus `OPENBLAS_CORETYPE`). Returns only when nothing
/// needed doing, or with the reason the restart failed (the program then goes on, slower).
#[cfg(target_os = "linux")]
pub fn run_on_the_right_blas_core() -> Option<String> {
    use std::os::unix::process::CommandExt;
    if std::env::var_os("OPENBLAS_CORETYPE").is_some() {
        return None; // the user's choice, or this is the restarted process
    }
    let detected = loaded().core?;
    let core = better_core(&detected, CpuLevel::detect())?;
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return Some(format!("OpenBLAS runs its {detected} kernels; could not find this program to restart it with {core}: {e}")),
    };
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| exe.clone().into_os_string());
    let err = std::process::Command::new(&exe).arg0(arg0).args(args).env("OPENBLAS_CORETYPE", core).exec();
    Some(format!("OpenBLAS runs its {detected} kernels; restarting with OPENBLAS_CORETYPE={core} failed: {err}"))
}

/// Elsewhere OpenBLAS is not what libmlx uses (Accelerate on macOS).
#[cfg(not(target_os = "linux"))]
pub fn run_on_the_right_blas_core() -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generic_core_on_a_modern_cpu_is_replaced() {
        assert_eq!(better_core("Prescott", CpuLevel::Avx512), Some("SkylakeX"));
        assert_eq!(better_core("Prescott", CpuLevel::Avx2), Some("Haswell"));
        assert_eq!(better_core("Sandybridge", CpuLevel::Avx2), Some("Haswell"));
        assert_eq!(better_core("Haswell", CpuLevel::Avx512), Some("SkylakeX"));
    }

    #[test]
    fn a_core_that_fits_the_cpu_or_is_unknown_is_kept() {
        assert_eq!(better_core("Zen", CpuLevel::Avx2), None);
        assert_eq!(better_core("SkylakeX", CpuLevel::Avx512), None);
        assert_eq!(better_core("SkylakeX", CpuLevel::Avx2), None); // never more than the CPU has
        assert_eq!(better_core("Prescott", CpuLevel::Sse), None);
        assert_eq!(better_core("Prescott", CpuLevel::Avx), None);
        assert_eq!(better_core("NeoverseN1", CpuLevel::Sse), None);
        assert_eq!(better_core("SomeFutureCore", CpuLevel::Avx512), None);
    }
}
