//! The BLAS that libmlx runs its CPU matmuls on: which library, which of its kernels, and how
//! fast, for `confab doctor`; and the choice of OpenBLAS's kernels by measurement.
//!
//! OpenBLAS picks its kernels ("core") once, when it is loaded, from the CPU's model number,
//! and not always well: Debian's 0.3.21 takes AVX-512 CPUs newer than itself for a "Prescott"
//! (SSE3) and runs float32 matmuls about five times slower than with its SkylakeX kernels, and
//! on some AVX2 EPYCs its "Zen" kernels reach a fraction of what its Haswell ones do. A core
//! can only be chosen before the library initialises (`OPENBLAS_CORETYPE`), and libmlx, which
//! links it, is loaded before `main`. So `run_on_the_right_blas_core`, first thing in `main`,
//! measures the cores the CPU can run, each in a child process (`probe`), once per CPU and
//! OpenBLAS library (the answer is remembered in the cache folder, `choice`), and starts the
//! program again on the fastest that computes correctly when that is not OpenBLAS's own.

mod choice;
#[cfg(target_os = "linux")]
mod probe;

use std::ffi::{c_char, c_int, CStr};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

use mlx_rs::{ops, random, Array};

pub use choice::{candidates, choose, failure_in_words, utc_time, Candidate, Choice, Outcome, Remembered, MARGIN, MAX_ERROR};
use choice::{CpuInfo, MachineKey, Plan};

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

/// Set on the restart, with `OPENBLAS_CORETYPE`: the core Confab chose, which tells its own
/// setting from the user's.
const CHOSEN_ENV: &str = "CONFAB_BLAS_CORE";
/// Set on the restart: `measured` (the probe ran at this start) or `remembered`.
const FROM_ENV: &str = "CONFAB_BLAS_CORE_FROM";
/// Rounds of the probe: each candidate is measured this many times, interleaved.
pub const PROBE_ROUNDS: usize = 2;
/// The probe's timed product, m×n×k: a 512-token prefill chunk through a linear layer
/// (x · Wᵀ), large enough for the kernels' steady state, small enough to take milliseconds.
pub const PROBE_SHAPE: (usize, usize, usize) = (512, 1024, 1024);

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
    /// Who chose the core, why, and the probe's measurements.
    pub choice: CoreChoice,
    /// A float32 matmul through MLX on its default device, in GFLOP/s.
    pub float32_gflops: f64,
}

impl BlasInfo {
    /// `remembered_in`: the folder the probe's answer is kept in (the caller's machine cache).
    pub fn probe(remembered_in: &Path) -> Result<Self> {
        let found = loaded();
        Ok(Self {
            choice: CoreChoice::of_this_process(&found, remembered_in),
            library: found.library,
            core: found.core,
            config: found.config,
            core_type_env: std::env::var("OPENBLAS_CORETYPE").ok(),
            float32_gflops: float32_gflops()?,
        })
    }
}

/// How the running core was chosen.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CoreChoice {
    /// `you` (`OPENBLAS_CORETYPE` was set), `probe` (measured, now or before) or `openblas`
    /// (not OpenBLAS, or nothing to choose between).
    pub chosen_by: &'static str,
    /// The reason, in words.
    pub why: String,
    /// Whether the probe ran at this start (else its answer was remembered).
    pub measured_now: bool,
    /// The probe's answer and its figures per candidate, when there is one for this CPU and
    /// library.
    pub probe: Option<Remembered>,
    /// Where the answer is remembered.
    pub file: PathBuf,
}

/// What `run_on_the_right_blas_core` did in this process, for `CoreChoice`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
#[derive(Debug, Default)]
struct ThisStart {
    measured_now: bool,
    /// The probe's answer when it ran here (it may not have been saved).
    measured: Option<Remembered>,
}

static THIS_START: OnceLock<ThisStart> = OnceLock::new();

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The file OpenBLAS's kernels are in: the one that defines `openblas_get_corename`, which can
/// differ from the one `cblas_sgemm` is found in (setup puts Debian's thin `libblas.so.3`,
/// linked to `libopenblas.so.0`, in the wheel's place; an upgrade replaces only the latter).
#[cfg(unix)]
fn openblas_library() -> Option<PathBuf> {
    use std::ffi::c_void;
    #[repr(C)]
    struct DlInfo {
        file_name: *const c_char,
        file_base: *mut c_void,
        symbol_name: *const c_char,
        symbol_address: *mut c_void,
    }
    extern "C" {
        fn dladdr(address: *const c_void, info: *mut DlInfo) -> c_int;
    }
    let this = libloading::os::unix::Library::this();
    // SAFETY: only the symbol's address is used.
    let address = unsafe { this.get::<*const c_void>(b"openblas_get_corename\0") }.ok()?.into_raw();
    let mut info = DlInfo {
        file_name: std::ptr::null(),
        file_base: std::ptr::null_mut(),
        symbol_name: std::ptr::null(),
        symbol_address: std::ptr::null_mut(),
    };
    // SAFETY: `info` is writable; dladdr fills it for an address inside a loaded object.
    if unsafe { dladdr(address as *const c_void, &mut info) } == 0 || info.file_name.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated path owned by the dynamic linker.
    let name = unsafe { CStr::from_ptr(info.file_name) }.to_string_lossy().into_owned();
    (!name.is_empty()).then(|| PathBuf::from(name))
}

#[cfg(not(unix))]
fn openblas_library() -> Option<PathBuf> {
    None
}

impl CoreChoice {
    fn of_this_process(found: &Loaded, dir: &Path) -> Self {
        let file = dir.join(choice::FILE_NAME);
        let start = THIS_START.get();
        let coretype = env("OPENBLAS_CORETYPE");
        let chosen = env(CHOSEN_ENV);
        let restarted_after_measuring = env(FROM_ENV).as_deref() == Some("measured") && chosen.is_some() && chosen == coretype;
        let measured_now = start.is_some_and(|s| s.measured_now) || restarted_after_measuring;
        let cpu = CpuInfo::read();
        let key = openblas_library().and_then(|library| MachineKey::new(&cpu, &library));
        let probe = key.as_ref().and_then(|key| Remembered::load(dir, key)).or_else(|| start.and_then(|s| s.measured.clone()));
        let own = found.core.as_deref();
        let candidates = own.map(|own| choice::candidates(&cpu.flags, own)).unwrap_or_default();
        let (chosen_by, why) = match choice::plan(coretype.as_deref(), chosen.as_deref(), own, candidates, probe.clone()) {
            Plan::UsersCore(core) => {
                ("you", format!("OPENBLAS_CORETYPE={core} is set: it stands, unmeasured (unset it to let Confab choose)"))
            }
            Plan::AlreadyChosen(_) | Plan::Remembered(_) => match &probe {
                Some(p) => ("probe", p.why.clone()),
                None => ("probe", "the probe's figures are not in the cache folder".to_string()),
            },
            Plan::Nothing if own.is_none() => ("openblas", "not OpenBLAS: nothing to choose".to_string()),
            Plan::Nothing => ("openblas", "OpenBLAS's own choice: no other core for this CPU's features".to_string()),
            Plan::Probe(_) => {
                ("openblas", "OpenBLAS's own choice: not measured (the program did not start through Confab's probe)".to_string())
            }
        };
        Self { chosen_by, why, measured_now, probe, file }
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

/// Called first thing in `main` (the CLI and the app). In a probe's child: measures and exits.
/// Otherwise, unless `OPENBLAS_CORETYPE` is set (the user's choice, or this is the restart),
/// takes the remembered answer for this CPU and library or measures the candidates, and, when
/// the fastest correct core is not the one OpenBLAS picked, starts this program again on it
/// (same arguments and environment, plus `OPENBLAS_CORETYPE`). Returns only when it did not
/// restart, with what went wrong if anything did (the program then goes on, on OpenBLAS's own
/// choice or a slower core), for the caller to log once logging is set up. `remembered_in`: the
/// folder the answer is kept in, per machine rather than per user's data (the caller's machine
/// cache), so that a fresh home does not measure the machine again.
#[cfg(target_os = "linux")]
pub fn run_on_the_right_blas_core(remembered_in: &Path) -> Option<String> {
    if probe::is_probe_child() {
        probe::measure_and_print();
        std::process::exit(0);
    }
    let coretype = env("OPENBLAS_CORETYPE");
    if coretype.is_some() {
        // The user's setting or the restart: nothing is read or measured.
        let measured_now = env(FROM_ENV).as_deref() == Some("measured") && env(CHOSEN_ENV) == coretype;
        let _ = THIS_START.set(ThisStart { measured_now, measured: None });
        return None;
    }
    let (Some(own), Some(library)) = (loaded().core, openblas_library()) else {
        let _ = THIS_START.set(ThisStart::default());
        return None; // not OpenBLAS
    };
    let cpu = CpuInfo::read();
    let key = MachineKey::new(&cpu, &library);
    let remembered = key.as_ref().and_then(|key| Remembered::load(remembered_in, key));
    let (answer, measured_now, mut problem) = match choice::plan(None, None, Some(&own), choice::candidates(&cpu.flags, &own), remembered) {
        Plan::Remembered(answer) => (answer, false, None),
        Plan::Probe(candidates) => {
            let started = Instant::now();
            let measured = probe::measure_candidates(&candidates, PROBE_ROUNDS);
            let Choice { core, why } = choose(&own, &measured);
            let answer = Remembered {
                format: choice::FORMAT,
                machine: key.clone().unwrap_or_else(|| MachineKey::unknown(&cpu, &library)),
                openblas_own: own.clone(),
                chosen: core,
                why,
                candidates: measured,
                measured_at_unix: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
                probe_seconds: started.elapsed().as_secs_f64(),
            };
            let problem = match key.as_ref().map(|_| answer.save(remembered_in)) {
                Some(Ok(())) => None,
                Some(Err(e)) => {
                    Some(format!("could not remember the BLAS core in {}: {e}; the next start measures again", remembered_in.display()))
                }
                None => Some(format!("could not identify {}: the BLAS core is measured at every start", library.display())),
            };
            (answer, true, problem)
        }
        _ => {
            let _ = THIS_START.set(ThisStart::default());
            return None; // one candidate only
        }
    };
    if answer.chosen.eq_ignore_ascii_case(&own) {
        let _ = THIS_START.set(ThisStart { measured_now, measured: measured_now.then_some(answer) });
        return problem;
    }
    // The restart: it must not be taken for the user's setting, nor measure again.
    use std::os::unix::process::CommandExt;
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            problem = Some(format!("OpenBLAS runs its {own} kernels; could not find this program to restart it on {}: {e}", answer.chosen));
            let _ = THIS_START.set(ThisStart { measured_now, measured: measured_now.then_some(answer) });
            return problem;
        }
    };
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| exe.clone().into_os_string());
    let err = std::process::Command::new(&exe)
        .arg0(arg0)
        .args(args)
        .env("OPENBLAS_CORETYPE", &answer.chosen)
        .env(CHOSEN_ENV, &answer.chosen)
        .env(FROM_ENV, if measured_now { "measured" } else { "remembered" })
        .exec();
    let _ = THIS_START.set(ThisStart { measured_now, measured: measured_now.then_some(answer.clone()) });
    Some(format!("OpenBLAS runs its {own} kernels; restarting with OPENBLAS_CORETYPE={} failed: {err}", answer.chosen))
}

/// Elsewhere OpenBLAS is not what libmlx uses (Accelerate on macOS).
#[cfg(not(target_os = "linux"))]
pub fn run_on_the_right_blas_core(_remembered_in: &Path) -> Option<String> {
    None
}
