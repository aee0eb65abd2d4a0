//! Runs a kernel test file's tests again on each narrower instruction set of the CPU kernels'
//! tiles (`CONFAB_CPU_ISA`, read once per process, so each set takes a process of its own): an
//! AVX-512 machine then checks the AVX2 and portable tiles against the same references and
//! tolerances as its own, as a CPU without AVX-512 (or an arm64 one) would run them.

use std::process::Command;

use confab_engine::model::layers::cpu_linear::{self, ISA_VALUES};

/// In the test process: runs this test binary (every test but the ignored ones) once per
/// instruction set narrower than this CPU's widest, each with `CONFAB_CPU_ISA` set, and fails
/// with the child's output when one of those runs fails. In such a child (or when the variable
/// was set by whoever ran the tests): checks that the tiles run on at most the set asked for.
pub fn rerun_on_narrower_instruction_sets() {
    let used = cpu_linear::instruction_set();
    let rank = |isa: &str| ISA_VALUES.iter().position(|v| *v == isa).expect("a known instruction set");
    if let Ok(asked) = std::env::var("CONFAB_CPU_ISA") {
        // A child (or a run narrowed by hand): the tiles are the asked set, or narrower where the
        // CPU lacks it.
        assert!(rank(used) >= rank(&asked), "CONFAB_CPU_ISA={asked}, yet the kernels use {used}");
        return;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    for isa in &ISA_VALUES[rank(used) + 1..] {
        let out = Command::new(&exe).env("CONFAB_CPU_ISA", isa).output().expect("the test binary runs again");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "the tests on the {isa} tiles failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
        let summary = stdout.lines().filter(|l| l.starts_with("test result")).collect::<Vec<_>>().join("; ");
        println!("{isa} tiles: {summary}");
    }
}
