//! The lower crates' errors in the command line's words: what to change is named by the flag
//! that changes it (the engine and the hub say it in neutral words).

use confab_engine::{EngineError, Remedy};
use confab_hub::HubError;

/// What to change, as the command line's flags.
fn remedy_words(remedy: Remedy) -> String {
    match remedy {
        Remedy::LowerMaxTokens => "lower --max-tokens".into(),
        Remedy::QuantizeKeysValues { bits: None } => format!("{remedy} (--kv-bits)"),
        Remedy::QuantizeKeysValues { bits: Some(bits) } => format!("{remedy} (--kv-bits {bits})"),
        Remedy::RaiseMemoryBudget => format!("{remedy} (--memory-budget)"),
        Remedy::LoadDraftModel => "load one with --draft-model PATH".into(),
        Remedy::ReportBug => format!("{remedy} (`confab doctor`)"),
    }
}

fn hub_message(error: &HubError) -> String {
    match error {
        HubError::FileNotFound { repo, file } => {
            format!("{repo} has no file `{file}`. `confab pull {repo}` without --file lists what it has.")
        }
        HubError::ChooseFile { repo, count, names } => format!("{repo} has {count} GGUF files; pick one with --file: {names}"),
        other => other.to_string(),
    }
}

/// An error and its causes, as `{:#}` writes them, each engine or hub error in the command
/// line's words.
pub fn message(error: &anyhow::Error) -> String {
    let causes: Vec<String> = error
        .chain()
        .map(|cause| {
            let engine = cause.downcast_ref::<EngineError>().or(match cause.downcast_ref::<confab_turn::TurnError>() {
                Some(confab_turn::TurnError::Engine(engine)) => Some(engine),
                _ => None,
            });
            if let Some(engine) = engine {
                engine.describe(&remedy_words)
            } else if let Some(hub) = cause.downcast_ref::<HubError>() {
                hub_message(hub)
            } else {
                cause.to_string()
            }
        })
        .collect();
    causes.join(": ")
}

#[cfg(test)]
mod tests {
    use confab_engine::MemoryShortfall;

    use super::*;

    #[test]
    fn engine_and_hub_errors_name_the_flags() {
        let shortfall = MemoryShortfall {
            state_bytes: 2_000_000,
            activation_bytes: 1_000_000,
            positions: 256,
            budget_bytes: 1_000_000,
            kv_bits: Some(8),
            reply_limited: true,
        };
        let said = message(&EngineError::NeverFits(shortfall).into());
        for says in [
            "may need 3 MB",
            "lower --max-tokens",
            "hold keys and values at 4 bits (--kv-bits 4)",
            "raise the memory budget (--memory-budget)",
        ] {
            assert!(said.contains(says), "{said} does not say {says}");
        }
        assert!(message(&EngineError::NoDraftModel.into()).contains("--draft-model PATH"));
        assert!(message(&EngineError::Internal("x".into()).into()).contains("(`confab doctor`)"));
        let choose = HubError::ChooseFile { repo: "o/m".into(), count: 2, names: "a.gguf, b.gguf".into() };
        assert_eq!(
            message(&anyhow::Error::new(choose).context("pulling")),
            "pulling: o/m has 2 GGUF files; pick one with --file: a.gguf, b.gguf"
        );
    }
}
