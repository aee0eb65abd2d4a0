//! Measuring OpenBLAS cores. A core is chosen when the library loads, so each candidate runs
//! in a child process: this program started again with `OPENBLAS_CORETYPE` set and
//! `CONFAB_BLAS_PROBE_CHILD=1`, which makes `main`'s first call measure, print one JSON line and
//! exit before anything else happens. The parent reads that line, or the crash, or the
//! silence (a core that hangs is killed).

use std::ffi::{c_char, c_int, CStr};
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::choice::{Candidate, ChildReport, Outcome};

/// Set in a probe's child: measure, print, exit.
pub(super) const PROBE_ENV: &str = "CONFAB_BLAS_PROBE_CHILD";

/// A child that has not answered by then is killed and its core counted as failed. Generous:
/// the measurement takes a few hundred milliseconds even on a slow generic core.
const CHILD_TIMEOUT: Duration = Duration::from_secs(20);

const M: usize = super::PROBE_SHAPE.0;
const N: usize = super::PROBE_SHAPE.1;
const K: usize = super::PROBE_SHAPE.2;
const TIMED_RUNS: usize = 5;

// CBLAS's enums.
const ROW_MAJOR: c_int = 101;
const NO_TRANS: c_int = 111;
const TRANS: c_int = 112;

type Sgemm = unsafe extern "C" fn(
    order: c_int,
    trans_a: c_int,
    trans_b: c_int,
    m: c_int,
    n: c_int,
    k: c_int,
    alpha: f32,
    a: *const f32,
    lda: c_int,
    b: *const f32,
    ldb: c_int,
    beta: f32,
    c: *mut f32,
    ldc: c_int,
);
type CoreName = unsafe extern "C" fn() -> *const c_char;

/// The loaded BLAS's entry points, found in the libraries this process already has (libmlx
/// links OpenBLAS); none when there is no OpenBLAS.
struct OpenBlas {
    sgemm: Sgemm,
    core_name: CoreName,
    // Keeps the handle (of the whole process) open while the pointers are in use.
    _this: libloading::os::unix::Library,
}

impl OpenBlas {
    fn find() -> Option<Self> {
        let this = libloading::os::unix::Library::this();
        // SAFETY: the symbols, when present, are OpenBLAS's with these C signatures.
        unsafe {
            let sgemm = *this.get::<Sgemm>(b"cblas_sgemm\0").ok()?;
            let core_name = *this.get::<CoreName>(b"openblas_get_corename\0").ok()?;
            Some(Self { sgemm, core_name, _this: this })
        }
    }

    fn core(&self) -> String {
        // SAFETY: OpenBLAS returns a static NUL-terminated string.
        let name = unsafe { (self.core_name)() };
        if name.is_null() {
            return String::new();
        }
        unsafe { CStr::from_ptr(name) }.to_string_lossy().trim().to_string()
    }

    /// c = alpha · op(a) · op(b) + beta · c, row-major; op(x) is x or xᵀ.
    #[allow(clippy::too_many_arguments)]
    fn sgemm(
        &self,
        trans_a: bool,
        trans_b: bool,
        m: usize,
        n: usize,
        k: usize,
        alpha: f32,
        a: &[f32],
        b: &[f32],
        beta: f32,
        c: &mut [f32],
    ) {
        debug_assert!(a.len() >= m * k && b.len() >= k * n && c.len() >= m * n, "probe shapes");
        let (lda, ldb) = (if trans_a { m } else { k }, if trans_b { k } else { n });
        let t = |yes: bool| if yes { TRANS } else { NO_TRANS };
        // SAFETY: the slices hold the matrices the dimensions and leading dimensions describe.
        unsafe {
            (self.sgemm)(
                ROW_MAJOR,
                t(trans_a),
                t(trans_b),
                m as c_int,
                n as c_int,
                k as c_int,
                alpha,
                a.as_ptr(),
                lda as c_int,
                b.as_ptr(),
                ldb as c_int,
                beta,
                c.as_mut_ptr(),
                n as c_int,
            );
        }
    }
}

/// Whether this process is a probe's child.
pub(super) fn is_probe_child() -> bool {
    std::env::var_os(PROBE_ENV).is_some()
}

/// In a probe's child: measures the core OpenBLAS runs and prints the report as one JSON line.
pub(super) fn measure_and_print() {
    let report = match OpenBlas::find() {
        Some(blas) => measure(&blas),
        None => ChildReport { core: String::new(), gflops: 0.0, error: f64::MAX },
    };
    // The parent reads stdout only; a failed write shows there as a missing line.
    if let Ok(line) = serde_json::to_string(&report) {
        println!("{line}");
    }
}

fn measure(blas: &OpenBlas) -> ChildReport {
    let mut error: f64 = 0.0;
    // Odd sizes, every transpose, alpha and beta: the kernels' edge cases, checked in full.
    let (m, n, k) = (67, 45, 129);
    let (a, b, c0) = (numbers(m * k, 1), numbers(k * n, 2), numbers(m * n, 3));
    for (trans_a, trans_b) in [(false, false), (false, true), (true, false), (true, true)] {
        let mut c = c0.clone();
        blas.sgemm(trans_a, trans_b, m, n, k, 0.75, &a, &b, 0.5, &mut c);
        for i in 0..m {
            for j in 0..n {
                error = error.max(entry_error(&a, &b, &c0, &c, (trans_a, trans_b), (m, n, k), (0.75, 0.5), (i, j)));
            }
        }
    }
    // The timed product, then a sample of its entries checked (all of them must be finite).
    let (a, b) = (numbers(M * K, 4), numbers(N * K, 5));
    let zeros = vec![0.0f32; M * N];
    let mut c = zeros.clone();
    blas.sgemm(false, true, M, N, K, 1.0, &a, &b, 0.0, &mut c); // warm-up: threads, pages
    let mut best = f64::MAX;
    for _ in 0..TIMED_RUNS {
        let start = Instant::now();
        blas.sgemm(false, true, M, N, K, 1.0, &a, &b, 0.0, &mut c);
        best = best.min(start.elapsed().as_secs_f64());
    }
    if c.iter().any(|x| !x.is_finite()) {
        error = f64::INFINITY;
    }
    for s in 0..256 {
        let (i, j) = ((s * 97 + 13) % M, (s * 389 + 7) % N);
        error = error.max(entry_error(&a, &b, &zeros, &c, (false, true), (M, N, K), (1.0, 0.0), (i, j)));
    }
    // JSON has no infinity nor NaN: the largest number stands for them.
    let error = if error.is_finite() { error } else { f64::MAX };
    ChildReport { core: blas.core(), gflops: 2.0 * (M * N * K) as f64 / best.max(1e-9) / 1e9, error }
}

/// |c[i,j] − reference| / (|alpha| Σ|a||b| + |beta c0| + tiny), the reference in f64: about
/// K·ε of float32 at worst for a correct kernel, order one for a wrong one.
#[allow(clippy::too_many_arguments)]
fn entry_error(
    a: &[f32],
    b: &[f32],
    c0: &[f32],
    c: &[f32],
    (trans_a, trans_b): (bool, bool),
    (m, n, k): (usize, usize, usize),
    (alpha, beta): (f32, f32),
    (i, j): (usize, usize),
) -> f64 {
    let (mut sum, mut scale) = (0.0f64, 0.0f64);
    for p in 0..k {
        let x = f64::from(if trans_a { a[p * m + i] } else { a[i * k + p] });
        let y = f64::from(if trans_b { b[j * k + p] } else { b[p * n + j] });
        sum += x * y;
        scale += (x * y).abs();
    }
    let before = f64::from(beta) * f64::from(c0[i * n + j]);
    let reference = f64::from(alpha) * sum + before;
    let got = f64::from(c[i * n + j]);
    if !got.is_finite() {
        return f64::INFINITY;
    }
    (got - reference).abs() / (f64::from(alpha).abs() * scale + before.abs() + 1e-30)
}

/// Deterministic numbers in [-1, 1) (a linear congruential generator), one stream per seed.
fn numbers(len: usize, seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// In the parent: runs this program once as a probe child on `core` and reads what it found.
pub(super) fn run_child(core: &str) -> Outcome {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return Outcome::Failed { reason: format!("could not find this program to start it: {e}") },
    };
    let child = Command::new(exe)
        .env("OPENBLAS_CORETYPE", core)
        .env(PROBE_ENV, "1")
        // What OpenBLAS says about a core name it does not know goes nowhere.
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => return Outcome::Failed { reason: format!("could not start: {e}") },
    };
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > CHILD_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Outcome::Failed { reason: format!("no answer in {} s", CHILD_TIMEOUT.as_secs()) };
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return Outcome::Failed { reason: format!("could not wait for it: {e}") },
        }
    };
    let mut out = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        let _ = stdout.read_to_string(&mut out);
    }
    if !status.success() {
        return Outcome::Failed { reason: describe_exit(status) };
    }
    match out.lines().rev().find_map(|line| serde_json::from_str::<ChildReport>(line).ok()) {
        Some(report) => super::choice::judge(core, &report),
        None => Outcome::Failed { reason: "exited without a measurement".into() },
    }
}

fn describe_exit(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status.signal() {
        Some(4) => "crashed: illegal instruction (SIGILL)".into(),
        Some(11) => "crashed: segmentation fault (SIGSEGV)".into(),
        Some(signal) => format!("crashed: signal {signal}"),
        None => format!("exited with status {}", status.code().unwrap_or(-1)),
    }
}

/// Measures every candidate `rounds` times, interleaved (a burst of load elsewhere then hurts
/// one round of each rather than every round of one), and keeps each one's best round; a core
/// that failed or computed wrong once is out.
pub(super) fn measure_candidates(candidates: &[String], rounds: usize) -> Vec<Candidate> {
    let mut results: Vec<Candidate> = candidates.iter().map(|core| Candidate { core: core.clone(), outcome: None }).collect();
    for _ in 0..rounds {
        for candidate in &mut results {
            if candidate.outcome.as_ref().is_some_and(|o| !o.is_correct()) {
                continue; // out already
            }
            let outcome = run_child(&candidate.core);
            candidate.outcome = Some(match candidate.outcome.take() {
                Some(before) => before.combine(outcome),
                None => outcome,
            });
        }
    }
    results
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_measure_is_zero_for_an_exact_product_and_large_for_a_wrong_one() {
        let (m, n, k) = (3, 2, 4);
        let (a, b, c0) = (numbers(m * k, 1), numbers(k * n, 2), numbers(m * n, 3));
        let mut c = vec![0.0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                let dot: f64 = (0..k).map(|p| f64::from(a[i * k + p]) * f64::from(b[p * n + j])).sum();
                c[i * n + j] = (2.0 * dot + 0.5 * f64::from(c0[i * n + j])) as f32;
            }
        }
        let error = |c: &[f32], i, j| entry_error(&a, &b, &c0, c, (false, false), (m, n, k), (2.0, 0.5), (i, j));
        // float32 rounding of the result only (tolerance: a few ε).
        assert!(error(&c, 1, 1) < 1e-6, "{}", error(&c, 1, 1));
        let mut wrong = c.clone();
        wrong[n + 1] += 0.5;
        assert!(error(&wrong, 1, 1) > 1e-2, "{}", error(&wrong, 1, 1));
        wrong[n + 1] = f32::NAN;
        assert_eq!(error(&wrong, 1, 1), f64::INFINITY);
    }

    #[test]
    fn probe_numbers_are_deterministic_and_in_range() {
        let x = numbers(1000, 7);
        assert_eq!(x, numbers(1000, 7));
        assert_ne!(x, numbers(1000, 8));
        assert!(x.iter().all(|v| (-1.0..1.0).contains(v)));
    }
}
