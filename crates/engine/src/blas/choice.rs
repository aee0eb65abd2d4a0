//! Which OpenBLAS core to run, decided from measurements: the candidates a CPU's features
//! allow, how each one did, the choice, and the remembered answer (one small JSON file in the
//! app's cache folder, valid for one CPU and one OpenBLAS library).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// What a probe's child prints: the core OpenBLAS ran, the timed product's speed, and the
/// largest error found (see `probe::entry_error`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(not(target_os = "linux"), allow(dead_code))] // the probe runs on Linux only
pub struct ChildReport {
    pub core: String,
    pub gflops: f64,
    pub error: f64,
}

/// A correct kernel's float32 error is about K·ε at worst (1024 · 6e-8 = 6e-5 for the timed
/// product, far less in practice); a wrong one is off by order one.
pub const MAX_ERROR: f64 = 1e-4;

/// Another core must beat OpenBLAS's own choice by this much to be chosen: less is within the
/// noise of a short measurement, and keeping OpenBLAS's own choice costs no restart.
pub const MARGIN: f64 = 0.10;

/// How one candidate did.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum Outcome {
    /// Computed right, this fast (sgemm, float32).
    Correct { gflops: f64, error: f64 },
    /// Computed wrong (`error` above `MAX_ERROR`, or not finite): never chosen.
    Wrong { gflops: f64, error: f64 },
    /// Crashed, hung, or said nothing: never chosen.
    Failed { reason: String },
    /// This OpenBLAS does not have it and ran another core instead.
    Unavailable { ran: String },
}

impl Outcome {
    pub fn is_correct(&self) -> bool {
        matches!(self, Self::Correct { .. })
    }

    pub fn correct_gflops(&self) -> Option<f64> {
        match self {
            Self::Correct { gflops, .. } => Some(*gflops),
            _ => None,
        }
    }

    /// Two rounds of one candidate: the best speed of two correct ones; otherwise the failure.
    pub fn combine(self, other: Self) -> Self {
        match (self, other) {
            (Self::Correct { gflops: g1, error: e1 }, Self::Correct { gflops: g2, error: e2 }) => {
                Self::Correct { gflops: g1.max(g2), error: e1.max(e2) }
            }
            (Self::Correct { .. }, failure) | (failure, _) => failure,
        }
    }
}

/// A child's report on `requested`, judged.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub fn judge(requested: &str, report: &ChildReport) -> Outcome {
    if !report.core.eq_ignore_ascii_case(requested) {
        return Outcome::Unavailable { ran: report.core.clone() };
    }
    // JSON has no infinity nor NaN: the largest number stands for them.
    let finite = |x: f64| if x.is_finite() { x } else { f64::MAX };
    let (gflops, error) = (finite(report.gflops), finite(report.error));
    if error <= MAX_ERROR && gflops < f64::MAX && gflops > 0.0 {
        Outcome::Correct { gflops, error }
    } else {
        Outcome::Wrong { gflops, error }
    }
}

/// One candidate core and how it did (none: not measured).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Candidate {
    pub core: String,
    pub outcome: Option<Outcome>,
}

/// The cores worth measuring on a CPU with these `/proc/cpuinfo` flags: OpenBLAS's own choice
/// first, then the x86-64 cores for the CPU's widest vectors and those one step narrower (a
/// fallback when the widest compute wrong). Generic SSE cores are never faster and are left
/// out; so is everything on other architectures (OpenBLAS's own choice only).
pub fn candidates(flags: &BTreeSet<String>, openblas_own: &str) -> Vec<String> {
    let has = |names: &[&str]| names.iter().all(|n| flags.contains(*n));
    let avx512 = has(&["avx512f", "avx512bw", "avx512dq", "avx512vl"]);
    let avx2 = has(&["avx2", "fma"]);
    let mut cores: Vec<&str> = Vec::new();
    if avx512 {
        cores.push("SkylakeX");
        if has(&["avx512_bf16"]) {
            cores.push("Cooperlake");
        }
        if has(&["amx_bf16", "amx_tile"]) {
            cores.push("SapphireRapids");
        }
        cores.extend(["Haswell", "Zen"]);
    } else if avx2 {
        cores.extend(["Haswell", "Zen", "Sandybridge"]);
    } else if has(&["avx"]) {
        cores.push("Sandybridge");
    }
    let mut out = vec![openblas_own.to_string()];
    out.extend(cores.into_iter().filter(|c| !c.eq_ignore_ascii_case(openblas_own)).map(str::to_string));
    out
}

/// The decision and its reason, in words for `confab doctor`.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub core: String,
    pub why: String,
}

/// The fastest candidate that computed right, unless OpenBLAS's own choice is within `MARGIN`
/// of it (or nothing computed right: then OpenBLAS's own choice stays, as without a probe).
pub fn choose(openblas_own: &str, measured: &[Candidate]) -> Choice {
    let speed = |c: &Candidate| c.outcome.as_ref().and_then(Outcome::correct_gflops);
    let best = measured.iter().filter_map(|c| speed(c).map(|g| (c, g))).max_by(|x, y| x.1.total_cmp(&y.1));
    let Some((best, best_gflops)) = best else {
        return Choice { core: openblas_own.into(), why: "no candidate computed correctly; OpenBLAS's own choice kept".into() };
    };
    let own = measured.iter().find(|c| c.core.eq_ignore_ascii_case(openblas_own));
    match own.and_then(speed) {
        Some(own_gflops) if best.core.eq_ignore_ascii_case(openblas_own) => {
            Choice { core: openblas_own.into(), why: format!("OpenBLAS's own choice, the fastest measured ({own_gflops:.0} GFLOP/s)") }
        }
        Some(own_gflops) if best_gflops <= own_gflops * (1.0 + MARGIN) => Choice {
            core: openblas_own.into(),
            why: format!(
                "OpenBLAS's own choice ({own_gflops:.0} GFLOP/s): the fastest, {} ({best_gflops:.0}), is within {:.0}% of it",
                best.core,
                MARGIN * 100.0
            ),
        },
        Some(own_gflops) => Choice {
            core: best.core.clone(),
            why: format!(
                "the fastest measured: {best_gflops:.0} GFLOP/s against {own_gflops:.0} for OpenBLAS's own choice, {openblas_own}"
            ),
        },
        None => Choice {
            core: best.core.clone(),
            why: format!(
                "the fastest that computed correctly ({best_gflops:.0} GFLOP/s); OpenBLAS's own choice, {openblas_own}, {}",
                own.and_then(|c| c.outcome.as_ref()).map_or("was not measured".to_string(), failure_in_words)
            ),
        },
    }
}

/// Why a candidate was out, in words.
pub fn failure_in_words(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Correct { gflops, .. } => format!("ran at {gflops:.0} GFLOP/s"),
        Outcome::Wrong { error, .. } if *error >= f64::MAX => "computed wrong (results not finite)".into(),
        Outcome::Wrong { error, .. } => {
            format!("computed wrong (error {error:.1e}, tolerance {MAX_ERROR:.0e})")
        }
        Outcome::Failed { reason } => reason.clone(),
        Outcome::Unavailable { ran } => format!("is not in this OpenBLAS (it ran {ran})"),
    }
}

/// What a remembered answer holds for: this CPU and this OpenBLAS library file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MachineKey {
    /// `/proc/cpuinfo`'s model name, for people.
    pub cpu_model: String,
    /// SHA-256 of the vendor, family, model, stepping and flags.
    pub cpu_sha256: String,
    /// The OpenBLAS library file, resolved, with its size and modification time.
    pub library: PathBuf,
    pub library_bytes: u64,
    pub library_modified_ns: u64,
}

impl MachineKey {
    /// For a library whose file could not be read: never equal to a real key's.
    pub fn unknown(cpu: &CpuInfo, library: &Path) -> Self {
        Self {
            cpu_model: cpu.model.clone(),
            cpu_sha256: cpu.sha256.clone(),
            library: library.into(),
            library_bytes: 0,
            library_modified_ns: 0,
        }
    }
}

/// The first processor's entry of `/proc/cpuinfo`: its identity and its flags.
pub struct CpuInfo {
    pub model: String,
    pub sha256: String,
    pub flags: BTreeSet<String>,
}

impl CpuInfo {
    pub fn parse(cpuinfo: &str) -> Self {
        let mut hasher = Sha256::new();
        let (mut model, mut flags) = (String::new(), BTreeSet::new());
        for line in cpuinfo.lines().take_while(|l| !l.trim().is_empty()) {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            let (name, value) = (name.trim(), value.trim());
            match name {
                "model name" => model = value.to_string(),
                "flags" | "Features" => flags = value.split_whitespace().map(str::to_string).collect(),
                _ => {}
            }
            if matches!(
                name,
                "vendor_id" | "cpu family" | "model" | "model name" | "stepping" | "flags" | "CPU implementer" | "CPU part" | "Features"
            ) {
                hasher.update(format!("{name}={value}\n"));
            }
        }
        let sha256 = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
        Self { model, sha256, flags }
    }

    pub fn read() -> Self {
        Self::parse(&std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default())
    }
}

impl MachineKey {
    /// None when the library's file cannot be read (then nothing is remembered).
    pub fn new(cpu: &CpuInfo, library: &Path) -> Option<Self> {
        let library = std::fs::canonicalize(library).ok()?;
        let meta = std::fs::metadata(&library).ok()?;
        let modified = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
        Some(Self {
            cpu_model: cpu.model.clone(),
            cpu_sha256: cpu.sha256.clone(),
            library,
            library_bytes: meta.len(),
            library_modified_ns: u64::try_from(modified.as_nanos()).unwrap_or(u64::MAX),
        })
    }
}

/// A probe's answer, as kept on disk.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Remembered {
    pub format: u32,
    pub machine: MachineKey,
    /// The core OpenBLAS picks by itself here.
    pub openblas_own: String,
    pub chosen: String,
    pub why: String,
    pub candidates: Vec<Candidate>,
    /// When it was measured (seconds since 1970, UTC) and how long the probe took.
    pub measured_at_unix: u64,
    pub probe_seconds: f64,
}

pub const FORMAT: u32 = 1;
pub const FILE_NAME: &str = "blas-core.json";

impl Remembered {
    /// The answer in `dir`, when there is one for this machine and library.
    pub fn load(dir: &Path, key: &MachineKey) -> Option<Self> {
        let text = std::fs::read(dir.join(FILE_NAME)).ok()?;
        serde_json::from_slice::<Self>(&text).ok().filter(|r| r.applies_to(key))
    }

    /// Another CPU, another library (or the same one updated), or another format: measure again.
    pub fn applies_to(&self, key: &MachineKey) -> bool {
        self.format == FORMAT && &self.machine == key
    }

    /// Written whole or not at all (two programs starting at once may both probe).
    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let temp = dir.join(format!(".{FILE_NAME}.{}", std::process::id()));
        std::fs::write(&temp, serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?)?;
        std::fs::rename(&temp, dir.join(FILE_NAME))
    }
}

/// What `main`'s first call does, given what it found.
#[derive(Debug, Clone, PartialEq)]
pub enum Plan {
    /// `OPENBLAS_CORETYPE` was set by the user (not by Confab's restart): it stands, untested.
    UsersCore(String),
    /// This process is Confab's restart on the core it chose.
    AlreadyChosen(String),
    /// Not OpenBLAS, or one candidate only: nothing to choose.
    Nothing,
    /// A remembered answer for this CPU and library.
    Remembered(Remembered),
    /// Measure the candidates.
    Probe(Vec<String>),
}

/// `coretype_env`: `OPENBLAS_CORETYPE`; `chosen_env`: the core a Confab restart set it to.
pub fn plan(
    coretype_env: Option<&str>,
    chosen_env: Option<&str>,
    openblas_own: Option<&str>,
    candidates: Vec<String>,
    remembered: Option<Remembered>,
) -> Plan {
    if let Some(set) = coretype_env.filter(|s| !s.is_empty()) {
        return match chosen_env {
            Some(chosen) if chosen == set => Plan::AlreadyChosen(set.to_string()),
            _ => Plan::UsersCore(set.to_string()),
        };
    }
    if openblas_own.is_none() || candidates.len() < 2 {
        return Plan::Nothing;
    }
    match remembered {
        Some(remembered) => Plan::Remembered(remembered),
        None => Plan::Probe(candidates),
    }
}

/// `measured_at_unix` as `YYYY-MM-DD HH:MM UTC`.
pub fn utc_time(unix: u64) -> String {
    let (days, rest) = ((unix / 86_400) as i64, unix % 86_400);
    let (year, month, day) = crate::text::civil_from_days(days);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02} UTC", rest / 3600, rest % 3600 / 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn correct(core: &str, gflops: f64) -> Candidate {
        Candidate { core: core.into(), outcome: Some(Outcome::Correct { gflops, error: 1e-7 }) }
    }

    fn flags(text: &str) -> BTreeSet<String> {
        text.split_whitespace().map(str::to_string).collect()
    }

    fn key(cpu: &str, library: &str) -> MachineKey {
        MachineKey {
            cpu_model: cpu.into(),
            cpu_sha256: format!("sha of {cpu}"),
            library: library.into(),
            library_bytes: 36_543_000,
            library_modified_ns: 1_671_408_000_000_000_000,
        }
    }

    fn remembered(machine: MachineKey) -> Remembered {
        Remembered {
            format: FORMAT,
            machine,
            openblas_own: "Zen".into(),
            chosen: "Haswell".into(),
            why: String::new(),
            candidates: vec![correct("Zen", 38.0), correct("Haswell", 150.0)],
            measured_at_unix: 0,
            probe_seconds: 1.0,
        }
    }

    // The machine: an AVX2 EPYC on which OpenBLAS 0.3.21 picks Zen at 38 GFLOP/s.
    #[test]
    fn a_much_faster_core_replaces_openblas_own_choice() {
        let measured = [correct("Zen", 38.0), correct("Haswell", 151.0), correct("Sandybridge", 70.0)];
        assert_eq!(choose("Zen", &measured).core, "Haswell");
    }

    #[test]
    fn openblas_own_choice_stays_when_nothing_beats_it_by_the_margin() {
        // This machine (Xeon, AVX-512): OpenBLAS picks Cooperlake; SkylakeX's sgemm is the same.
        let measured = [correct("Cooperlake", 110.0), correct("SkylakeX", 118.0), correct("Haswell", 67.0), correct("Zen", 66.0)];
        let choice = choose("Cooperlake", &measured);
        assert_eq!(choice.core, "Cooperlake", "{choice:?}");
        assert!(choice.why.contains("within 10%"), "{}", choice.why);
        assert_eq!(choose("Cooperlake", &[correct("Cooperlake", 120.0), correct("SkylakeX", 118.0)]).core, "Cooperlake");
    }

    #[test]
    fn a_faster_core_that_computes_wrong_or_crashes_is_never_chosen() {
        let measured = [
            correct("Zen", 38.0),
            Candidate { core: "SkylakeX".into(), outcome: Some(Outcome::Wrong { gflops: 400.0, error: 0.7 }) },
            Candidate {
                core: "Cooperlake".into(),
                outcome: Some(Outcome::Failed { reason: "crashed: illegal instruction (SIGILL)".into() }),
            },
            Candidate { core: "SapphireRapids".into(), outcome: Some(Outcome::Unavailable { ran: "Zen".into() }) },
            correct("Haswell", 120.0),
        ];
        assert_eq!(choose("Zen", &measured).core, "Haswell");
        // Only broken cores beside OpenBLAS's own: it stays.
        assert_eq!(choose("Zen", &measured[..4]).core, "Zen");
    }

    #[test]
    fn when_openblas_own_choice_computes_wrong_the_fastest_correct_core_is_chosen_even_if_slower() {
        let measured = [
            Candidate { core: "Prescott".into(), outcome: Some(Outcome::Wrong { gflops: 90.0, error: f64::INFINITY }) },
            correct("Haswell", 60.0),
        ];
        let choice = choose("Prescott", &measured);
        assert_eq!(choice.core, "Haswell");
        assert!(choice.why.contains("computed wrong"), "{}", choice.why);
        // Nothing correct at all: OpenBLAS's own choice, as without a probe.
        assert_eq!(choose("Prescott", &measured[..1]).core, "Prescott");
    }

    #[test]
    fn a_child_report_is_judged_by_the_core_it_ran_and_its_error() {
        let report = |core: &str, error: f64| ChildReport { core: core.into(), gflops: 100.0, error };
        assert!(judge("SkylakeX", &report("SkylakeX", 3e-7)).is_correct());
        assert!(judge("skylakex", &report("SkylakeX", 3e-7)).is_correct());
        assert_eq!(judge("SkylakeX", &report("SkylakeX", 2e-4)), Outcome::Wrong { gflops: 100.0, error: 2e-4 });
        let not_finite = judge("SkylakeX", &report("SkylakeX", f64::NAN));
        assert_eq!(not_finite, Outcome::Wrong { gflops: 100.0, error: f64::MAX });
        assert_eq!(failure_in_words(&not_finite), "computed wrong (results not finite)");
        // Kept on disk as it was judged (JSON has no NaN).
        let kept: Outcome = serde_json::from_str(&serde_json::to_string(&not_finite).unwrap()).unwrap();
        assert_eq!(kept, not_finite);
        // OpenBLAS 0.3.21 has no SapphireRapids core and runs what it detects instead.
        assert_eq!(judge("SapphireRapids", &report("Cooperlake", 0.0)), Outcome::Unavailable { ran: "Cooperlake".into() });
    }

    #[test]
    fn rounds_keep_the_best_speed_and_any_failure() {
        let ok = |g| Outcome::Correct { gflops: g, error: 1e-7 };
        assert_eq!(ok(90.0).combine(ok(110.0)), ok(110.0));
        let crash = Outcome::Failed { reason: "crashed".into() };
        assert_eq!(ok(90.0).combine(crash.clone()), crash);
        assert_eq!(crash.clone().combine(ok(90.0)), crash);
    }

    #[test]
    fn candidates_follow_the_cpu_features() {
        let epyc = flags("sse sse2 avx avx2 fma bmi2");
        assert_eq!(candidates(&epyc, "Zen"), ["Zen", "Haswell", "Sandybridge"]);
        let xeon = flags("avx avx2 fma avx512f avx512dq avx512bw avx512vl avx512_bf16 avx512_fp16");
        assert_eq!(candidates(&xeon, "Cooperlake"), ["Cooperlake", "SkylakeX", "Haswell", "Zen"]);
        // The generic core an old OpenBLAS takes a new CPU for is measured too, as the baseline.
        assert_eq!(
            candidates(&flags("avx avx2 fma avx512f avx512dq avx512bw avx512vl"), "Prescott"),
            ["Prescott", "SkylakeX", "Haswell", "Zen"]
        );
        assert_eq!(
            candidates(&flags("avx avx2 fma avx512f avx512dq avx512bw avx512vl avx512_bf16 amx_bf16 amx_tile"), "SapphireRapids")[..3],
            ["SapphireRapids", "SkylakeX", "Cooperlake"]
        );
        // Never a core the CPU lacks the instructions for; nothing to choose without AVX.
        assert_eq!(candidates(&flags("sse sse2 sse3"), "Prescott"), ["Prescott"]);
        assert_eq!(candidates(&flags("fp asimd"), "NeoverseN1"), ["NeoverseN1"]);
    }

    #[test]
    fn cpuinfo_gives_the_first_processors_model_flags_and_identity() {
        let text = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\nmodel name\t: AMD EPYC 7713\nflags\t\t: fpu avx avx2 fma\n\nprocessor\t: 1\nmodel name\t: other\n";
        let cpu = CpuInfo::parse(text);
        assert_eq!(cpu.model, "AMD EPYC 7713");
        assert_eq!(cpu.flags, flags("fpu avx avx2 fma"));
        assert_eq!(cpu.sha256, CpuInfo::parse(text).sha256);
        assert_ne!(cpu.sha256, CpuInfo::parse(&text.replace("avx2 ", "")).sha256);
        assert_ne!(cpu.sha256, CpuInfo::parse(&text.replace("model\t\t: 1", "model\t\t: 17")).sha256);
    }

    #[test]
    fn the_users_variable_wins_over_everything() {
        let cands = vec!["Zen".to_string(), "Haswell".to_string()];
        let here = key("AMD EPYC 7713", "/usr/lib/libopenblasp-r0.3.21.so");
        let plan_with = |env, chosen| plan(env, chosen, Some("Zen"), cands.clone(), Some(remembered(here.clone())));
        assert_eq!(plan_with(Some("Sandybridge"), None), Plan::UsersCore("Sandybridge".into()));
        // Even when a Confab restart's marker is around (inherited) but names another core.
        assert_eq!(plan_with(Some("Sandybridge"), Some("Haswell")), Plan::UsersCore("Sandybridge".into()));
        assert_eq!(plan_with(Some("Haswell"), Some("Haswell")), Plan::AlreadyChosen("Haswell".into()));
        assert!(matches!(plan_with(None, None), Plan::Remembered(r) if r.chosen == "Haswell"));
        assert!(matches!(plan_with(Some(""), None), Plan::Remembered(_)));
        assert_eq!(plan(None, None, Some("Zen"), cands.clone(), None), Plan::Probe(cands.clone()));
        assert_eq!(plan(None, None, None, cands, None), Plan::Nothing);
        assert_eq!(plan(None, None, Some("Prescott"), vec!["Prescott".into()], None), Plan::Nothing);
    }

    #[test]
    fn a_remembered_answer_for_another_cpu_or_library_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let here = key("AMD EPYC 7713", "/usr/lib/libopenblasp-r0.3.21.so");
        remembered(here.clone()).save(dir.path()).unwrap();
        assert_eq!(Remembered::load(dir.path(), &here).map(|r| r.chosen), Some("Haswell".into()));
        // Another CPU (same model name, other flags: a VM that hides AVX-512, a microcode change).
        assert!(Remembered::load(dir.path(), &key("AMD EPYC 9654", "/usr/lib/libopenblasp-r0.3.21.so")).is_none());
        let other_flags = MachineKey { cpu_sha256: "other".into(), ..here.clone() };
        assert!(Remembered::load(dir.path(), &other_flags).is_none());
        // Another library, or the same file replaced by an update.
        assert!(Remembered::load(dir.path(), &key("AMD EPYC 7713", "/usr/lib/libopenblasp-r0.3.26.so")).is_none());
        assert!(Remembered::load(dir.path(), &MachineKey { library_bytes: 1, ..here.clone() }).is_none());
        assert!(Remembered::load(dir.path(), &MachineKey { library_modified_ns: 1, ..here.clone() }).is_none());
        // An older format, or a damaged file.
        Remembered { format: FORMAT + 1, ..remembered(here.clone()) }.save(dir.path()).unwrap();
        assert!(Remembered::load(dir.path(), &here).is_none());
        std::fs::write(dir.path().join(FILE_NAME), b"{ not json").unwrap();
        assert!(Remembered::load(dir.path(), &here).is_none());
    }

    #[test]
    fn times_are_shown_in_utc() {
        assert_eq!(utc_time(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_time(1_796_298_000), "2026-12-03 11:40 UTC");
        assert_eq!(utc_time(951_825_600), "2000-02-29 12:00 UTC");
    }
}
