//! The short fuzz run inside `make test`: every target over its seeds, then deterministic
//! mutations of them for half a second each (CONFAB_FUZZ_SMOKE_MS, default 500), the targets
//! spread over the machine's cores. A panic that
//! escapes a target fails the test and names the input's seed and mutation number; an input that
//! runs longer than CONFAB_FUZZ_INPUT_TIMEOUT_S (default 20) aborts the process after saying which.
//! `make fuzz` is the real run (coverage guided, minutes per target).

use confab_fuzz::mutate::{mutate, Rng};
use confab_fuzz::{seeds, Target, TARGETS};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Runs one target; returns how many inputs it ran.
fn smoke(target: &Target) -> u64 {
    let budget = Duration::from_millis(env_u64("CONFAB_FUZZ_SMOKE_MS", 500));
    let input_timeout = env_u64("CONFAB_FUZZ_INPUT_TIMEOUT_S", 20);
    let seeds = seeds(target);
    // The watchdog: a hang is a finding, and a test that never ends says nothing.
    let started_input = Arc::new(AtomicU64::new(0));
    // Which input runs: seeds first (in `seeds()`'s order), then mutations, numbered on.
    let current = Arc::new(AtomicU64::new(0));
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let clock = Instant::now();
    {
        let (started_input, current, done, name) = (started_input.clone(), current.clone(), done.clone(), target.name);
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                let started = started_input.load(Ordering::Relaxed);
                if started > 0 && clock.elapsed().as_millis() as u64 > started + input_timeout * 1000 {
                    let input = current.load(Ordering::Relaxed);
                    eprintln!("fuzz target {name}: input {input} (seeds first, then mutations) ran over {input_timeout} s");
                    std::process::abort();
                }
            }
        });
    }
    // The label is made only for a failure: this runs for every input.
    let run_one = |index: u64, label: &dyn Fn() -> String, data: &[u8]| {
        current.store(index, Ordering::Relaxed);
        started_input.store(clock.elapsed().as_millis() as u64 + 1, Ordering::Relaxed);
        let outcome = std::panic::catch_unwind(|| (target.run)(data));
        started_input.store(0, Ordering::Relaxed);
        if outcome.is_err() {
            let saved = std::env::temp_dir().join(format!("confab-fuzz-{}-crash", target.name));
            let _ = std::fs::write(&saved, data);
            panic!("fuzz target {}: {} panicked; the input is saved at {}", target.name, label(), saved.display());
        }
    };
    let mut ran = 0;
    for (path, bytes) in &seeds {
        run_one(ran, &|| format!("seed {}", path.display()), bytes);
        ran += 1;
    }
    let seed_bytes: Vec<&[u8]> = if seeds.is_empty() { vec![&[][..]] } else { seeds.iter().map(|(_, b)| b.as_slice()).collect() };
    let mut rng = Rng::new(0x5eed ^ target.name.len() as u64);
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < budget {
        let input = seed_bytes[rng.below(seed_bytes.len())];
        let other = seed_bytes[rng.below(seed_bytes.len())];
        let data = mutate(&mut rng, input, other, 1 << 20);
        run_one(ran + n, &|| format!("mutation {n}"), &data);
        n += 1;
    }
    done.store(true, Ordering::Relaxed);
    ran + n
}

#[test]
fn every_target_survives_its_seeds_and_mutations() {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while let Some(target) = TARGETS.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let ran = smoke(target);
                    println!("{:<24} {ran} inputs", target.name);
                }
            });
        }
    });
}

#[test]
fn every_target_has_its_cargo_fuzz_binary() {
    let root = confab_fuzz::repository_root();
    let manifest = std::fs::read_to_string(root.join("fuzz/Cargo.toml")).unwrap();
    for target in TARGETS {
        let file = root.join(format!("fuzz/fuzz_targets/{}.rs", target.name));
        let body = std::fs::read_to_string(&file).unwrap_or_else(|_| panic!("{} is missing", file.display()));
        assert!(body.contains(&format!("run(\"{}\"", target.name)), "{} does not run {}", file.display(), target.name);
        assert!(manifest.contains(&format!("name = \"{}\"", target.name)), "fuzz/Cargo.toml has no [[bin]] for {}", target.name);
    }
}

/// The smoke's inputs reproduce: a failure's "mutation N" names the same bytes next time.
#[test]
fn the_same_seed_gives_the_same_mutations() {
    let input = b"GGUF\x03\x00\x00\x00 some header bytes";
    let run = |seed| {
        let mut rng = Rng::new(seed);
        (0..100).map(|_| mutate(&mut rng, input, b"other", 1 << 10)).collect::<Vec<_>>()
    };
    assert_eq!(run(7), run(7));
    assert_ne!(run(7), run(8));
    assert!(run(7).iter().any(|m| m.as_slice() != input));
}
