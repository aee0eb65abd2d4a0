//! For scripts/fuzz.sh: `fuzz-seeds --list` prints the targets' names; `fuzz-seeds <target>
//! <folder>` copies the target's seeds (its fixtures and fuzz/corpus/<target>/) into the folder
//! libFuzzer grows its corpus in.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [list] if list == "--list" => {
            for target in confab_fuzz::TARGETS {
                println!("{}", target.name);
            }
            ExitCode::SUCCESS
        }
        [name, folder] => {
            let Some(target) = confab_fuzz::target(name) else {
                eprintln!("no fuzz target named {name} (fuzz-seeds --list names them)");
                return ExitCode::FAILURE;
            };
            if let Err(e) = std::fs::create_dir_all(folder) {
                eprintln!("cannot make {folder}: {e}");
                return ExitCode::FAILURE;
            }
            for (i, (_, bytes)) in confab_fuzz::seeds(target).iter().enumerate() {
                if let Err(e) = std::fs::write(format!("{folder}/seed-{i:04}"), bytes) {
                    eprintln!("cannot write into {folder}: {e}");
                    return ExitCode::FAILURE;
                }
            }
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("usage: fuzz-seeds --list | fuzz-seeds <target> <folder>");
            ExitCode::FAILURE
        }
    }
}
