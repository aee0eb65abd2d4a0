//! The error every command returns: a message the window can show as it is; and the lower
//! crates' errors in the app's words (they say what to change neutrally, as a fact: the app
//! names the pane where it is changed).

use std::fmt;

use confab_engine::{EngineError, Remedy};
use confab_mcp::{CallError, ServerRemedy};
use confab_paths::DefaultModelError;

/// Serialised as a plain string, which the UI's `call` turns into an `Error`.
#[derive(Debug)]
pub struct Failure(pub String);

/// The errors commands meet, each already worded for people.
macro_rules! failure_from {
    ($($error:ty),*) => {$(
        impl From<$error> for Failure {
            fn from(error: $error) -> Self {
                Failure(error.to_string())
            }
        }
    )*};
}

failure_from!(confab_store::StoreError, tauri::Error, std::io::Error);

impl From<EngineError> for Failure {
    fn from(error: EngineError) -> Self {
        Failure(engine_message(&error))
    }
}

/// What to change, named by the pane that changes it.
fn remedy_words(remedy: Remedy) -> String {
    match remedy {
        Remedy::LowerMaxTokens => format!("{remedy} (Settings › Chat › Max tokens)"),
        Remedy::QuantizeKeysValues { .. } => format!("{remedy} (Settings › Model)"),
        Remedy::RaiseMemoryBudget => format!("{remedy} (Settings › Storage › Memory for replies)"),
        Remedy::LoadDraftModel => "pick one in Settings › Model".into(),
        Remedy::ReportBug => format!("{remedy} (Settings › Advanced › About › Copy diagnostics)"),
    }
}

/// An engine error as the app says it.
pub fn engine_message(error: &EngineError) -> String {
    error.describe(&remedy_words)
}

/// A failed tool call as the app says it: tool servers are set up in Settings › Tools.
pub fn tool_call_message(error: &CallError) -> String {
    error.describe(&|remedy: ServerRemedy| format!("{remedy} in Settings › Tools"))
}

/// Why the default model could not be installed, as the app says it: other models are picked
/// in the model menu, folders added in Settings.
pub fn default_model_message(error: &DefaultModelError) -> String {
    match error {
        DefaultModelError::NotPackaged { name, models_dir } => format!(
            "The default model ({name}) is not in {} and this copy of Confab carries none. Pick a model in the model menu, or add a folder with models in Settings.",
            models_dir.display()
        ),
        DefaultModelError::Checksum { packaged, expected, actual } => format!(
            "The default model in {} is damaged (SHA-256 {actual}, expected {expected}). Reinstall Confab, or pick a model in the model menu.",
            packaged.display()
        ),
        other => other.to_string(),
    }
}

/// The chat-turn layer's refusals, in the window's words.
impl From<confab_turn::TurnError> for Failure {
    fn from(error: confab_turn::TurnError) -> Self {
        use confab_turn::TurnError;
        match error {
            TurnError::Engine(error) => error.into(),
            other => Failure(other.to_string()),
        }
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure(message)
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Self {
        Failure(message.to_string())
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl serde::Serialize for Failure {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use confab_engine::MemoryShortfall;
    use confab_mcp::Readiness;

    use super::*;

    #[test]
    fn lower_crates_errors_name_the_apps_panes() {
        let shortfall = MemoryShortfall {
            state_bytes: 2_000_000,
            activation_bytes: 1_000_000,
            positions: 256,
            budget_bytes: 1_000_000,
            kv_bits: None,
            reply_limited: true,
        };
        let said = engine_message(&EngineError::NeverFits(shortfall));
        for says in [
            "(Settings › Chat › Max tokens)",
            "hold keys and values at 8 or 4 bits (Settings › Model)",
            "raise the memory budget (Settings › Storage › Memory for replies)",
        ] {
            assert!(said.contains(says), "{said} does not say {says}");
        }
        assert!(engine_message(&EngineError::NoDraftModel).ends_with("pick one in Settings › Model"));
        assert!(engine_message(&EngineError::Internal("x".into())).contains("Settings › Advanced › About › Copy diagnostics"));
        let timeout = CallError::Timeout { server: "s".into(), tool: "t".into(), waited: Duration::from_secs(2) };
        assert!(tool_call_message(&timeout).ends_with("Try again, or raise the tool timeout in Settings › Tools."));
        let failed = CallError::NotReady {
            server: "s".into(),
            state: "has failed".into(),
            readiness: Readiness::Failed { error: "It exited.".into() },
        };
        assert!(tool_call_message(&failed).ends_with("It exited. Restart it in Settings › Tools."));
        assert!(
            tool_call_message(&CallError::UnknownServer { server: "s".into() }).contains("Add it in Settings › Tools, or check the name.")
        );
        let missing = DefaultModelError::NotPackaged { name: "m".into(), models_dir: "/m".into() };
        assert!(default_model_message(&missing).contains("Pick a model in the model menu, or add a folder with models in Settings."));
    }
}
