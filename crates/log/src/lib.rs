//! Where Confab's log goes. The engine, store and server only emit `tracing` events; the
//! binaries choose the destination here: the CLI writes to stderr (`-v` for more), the app to a
//! rotating file in its logs folder (and stderr). `CONFAB_LOG` overrides the levels with
//! `tracing-subscriber`'s filter syntax, e.g. `CONFAB_LOG=confab_engine=trace`.

mod rotating;

use std::path::{Path, PathBuf};

use tracing_subscriber::fmt::writer::MakeWriterExt;
use tracing_subscriber::EnvFilter;

pub use rotating::RotatingFile;

/// The variable that overrides the levels chosen here.
pub const FILTER_VAR: &str = "CONFAB_LOG";

/// The app's log file inside its logs folder; older ones get `.1`, `.2`, … appended.
pub const LOG_FILE: &str = "confab.log";

/// The crates whose events we log at the chosen level; everything else only warns.
const OURS: [&str; 6] = ["confab", "confab_engine", "confab_server", "confab_store", "confab_app", "confab_cli"];

/// The filter for a verbosity: 0 warnings, 1 info (a line per load and request), 2 debug
/// (prefill chunks, cache lookups), 3 and more trace (every decode step).
pub fn filter(verbosity: u8) -> EnvFilter {
    if let Ok(directives) = std::env::var(FILTER_VAR) {
        if let Ok(filter) = EnvFilter::try_new(&directives) {
            return filter;
        }
    }
    let level = match verbosity {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let ours = OURS.iter().map(|c| format!("{c}={level}")).collect::<Vec<_>>().join(",");
    EnvFilter::new(format!("warn,{ours}"))
}

/// The CLI's log: stderr, without timestamps' clutter at the default level.
pub fn init_stderr(verbosity: u8) {
    let _ = tracing_subscriber::fmt().with_env_filter(filter(verbosity)).with_writer(std::io::stderr).with_ansi(false).try_init();
}

/// The app's log: `logs_dir/confab.log` (rotated at `RotatingFile::MAX_BYTES`) at info, and
/// stderr. A folder that cannot be written leaves stderr only, and says so.
pub fn init_app(logs_dir: &Path) {
    let filter = filter(1);
    match RotatingFile::open(logs_dir) {
        Ok(file) => {
            let writer = std::io::stderr.and(file);
            let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(writer).with_ansi(false).try_init();
        }
        Err(e) => {
            let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(false).try_init();
            tracing::warn!("could not open the log file in {}: {e}; logging to stderr only", logs_dir.display());
        }
    }
}

/// The log file's path in a logs folder.
pub fn log_path(logs_dir: &Path) -> PathBuf {
    logs_dir.join(LOG_FILE)
}

/// The last `lines` lines logged, oldest first (from the rotated file too when the current one
/// is short). Empty when nothing was logged yet.
pub fn tail(logs_dir: &Path, lines: usize) -> Vec<String> {
    let mut kept: Vec<String> = vec![];
    for path in [rotating::rotated(logs_dir, 1), log_path(logs_dir)] {
        if let Ok(text) = std::fs::read_to_string(&path) {
            kept.extend(text.lines().map(str::to_string));
        }
    }
    let start = kept.len().saturating_sub(lines);
    kept.split_off(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_reads_across_the_rotated_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(rotating::rotated(dir.path(), 1), "a\nb\n").unwrap();
        std::fs::write(log_path(dir.path()), "c\nd\n").unwrap();
        assert_eq!(tail(dir.path(), 3), ["b", "c", "d"]);
        assert_eq!(tail(dir.path(), 10), ["a", "b", "c", "d"]);
        assert!(tail(&dir.path().join("missing"), 5).is_empty());
    }

    #[test]
    fn verbosity_sets_our_crates_level_only() {
        std::env::remove_var(FILTER_VAR);
        let text = filter(2).to_string();
        assert!(text.contains("confab_engine=debug"), "{text}");
        assert!(text.starts_with("warn") || text.contains(",warn") || text.ends_with("warn"), "{text}");
    }
}
