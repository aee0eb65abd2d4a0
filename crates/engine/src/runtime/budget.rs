//! The memory budget of running requests: a size (`4GB`, `512MiB`) or a share of the physical
//! memory left after the loaded weights (`60%`). The one place such a setting is read and
//! checked, for the server's `--memory-budget`, the CLI and the app's settings.

use std::fmt;
use std::str::FromStr;

use crate::error::EngineError;

/// What running requests may hold together (`BatchOptions::memory_budget`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MemoryBudget {
    /// This many bytes.
    Bytes(u64),
    /// This share (above 0, at most 1) of physical memory after the loaded weights.
    Share(f64),
}

impl Default for MemoryBudget {
    fn default() -> Self {
        MemoryBudget::Share(crate::defaults::MEMORY_BUDGET_SHARE)
    }
}

impl MemoryBudget {
    /// The budget in bytes on a machine of `physical` bytes whose loaded models take `weights`.
    pub fn bytes(self, physical: u64, weights: u64) -> u64 {
        match self {
            MemoryBudget::Bytes(b) => b,
            MemoryBudget::Share(share) => (physical.saturating_sub(weights) as f64 * share) as u64,
        }
    }
}

const UNITS: [(&str, u64); 9] = [
    ("tib", 1 << 40),
    ("gib", 1 << 30),
    ("mib", 1 << 20),
    ("kib", 1 << 10),
    ("tb", 1_000_000_000_000),
    ("gb", 1_000_000_000),
    ("mb", 1_000_000),
    ("kb", 1_000),
    ("b", 1),
];

impl FromStr for MemoryBudget {
    type Err = EngineError;

    fn from_str(text: &str) -> Result<Self, EngineError> {
        let refuse = |why: &str| {
            EngineError::invalid(
                "memory_budget",
                format!("`{text}` {why}: give a size such as 4GB, 512MB or 1.5GiB, or a share of the memory left after the model's weights such as 60%"),
            )
        };
        let lower = text.trim().to_ascii_lowercase();
        if let Some(percent) = lower.strip_suffix('%') {
            let percent: f64 = percent.trim().parse().map_err(|_| refuse("is not a number of percent"))?;
            if !(percent > 0.0 && percent <= 100.0) {
                return Err(refuse("is not a share between 0% and 100%"));
            }
            return Ok(MemoryBudget::Share(percent / 100.0));
        }
        let (number, unit) =
            UNITS.iter().find_map(|(suffix, unit)| lower.strip_suffix(suffix).map(|n| (n.trim(), *unit))).unwrap_or((lower.as_str(), 1));
        let number: f64 = number.parse().map_err(|_| refuse("is not a size"))?;
        let bytes = number * unit as f64;
        if !(bytes.is_finite() && bytes >= 1.0) {
            return Err(refuse("is not a positive size"));
        }
        Ok(MemoryBudget::Bytes(bytes as u64))
    }
}

/// Written back in a form `from_str` reads: `60%`, or the size in the largest unit that
/// divides it.
impl fmt::Display for MemoryBudget {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match *self {
            MemoryBudget::Share(share) => write!(f, "{}%", (share * 1e4).round() / 1e2),
            MemoryBudget::Bytes(bytes) => {
                let (suffix, unit) =
                    UNITS.iter().filter(|(_, unit)| bytes % unit == 0).max_by_key(|(_, unit)| *unit).expect("every size divides by 1");
                write!(f, "{}{}", bytes / unit, suffix.to_ascii_uppercase().replace("IB", "iB"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_shares_are_read_and_written_back() {
        for (text, budget, written) in [
            ("4GB", MemoryBudget::Bytes(4_000_000_000), "4GB"),
            ("1.5 GiB", MemoryBudget::Bytes(3 << 29), "1536MiB"),
            ("512mb", MemoryBudget::Bytes(512_000_000), "512MB"),
            ("1000", MemoryBudget::Bytes(1000), "1KB"),
            ("60%", MemoryBudget::Share(0.6), "60%"),
            (" 100 % ", MemoryBudget::Share(1.0), "100%"),
        ] {
            let read: MemoryBudget = text.parse().unwrap();
            assert_eq!(read, budget, "{text}");
            assert_eq!(read.to_string(), written, "{text}");
            assert_eq!(written.parse::<MemoryBudget>().unwrap(), budget, "{written}");
        }
    }

    #[test]
    fn a_budget_that_means_nothing_is_refused_saying_what_to_give() {
        for text in ["", "lots", "0", "-1GB", "0%", "150%", "4XB", "nan", "inf"] {
            let error = text.parse::<MemoryBudget>().unwrap_err().to_string();
            assert!(error.contains("give a size such as 4GB") && error.contains("60%"), "{text}: {error}");
        }
    }

    #[test]
    fn a_share_is_of_the_memory_left_after_the_weights() {
        assert_eq!(MemoryBudget::Share(0.5).bytes(16 << 30, 4 << 30), 6 << 30);
        assert_eq!(MemoryBudget::Share(0.5).bytes(1 << 30, 2 << 30), 0);
        assert_eq!(MemoryBudget::Bytes(7).bytes(16 << 30, 4 << 30), 7);
    }
}
