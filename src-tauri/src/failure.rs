//! The error every command returns: a message the window can show as it is.

use std::fmt;

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

failure_from!(confab_store::StoreError, confab_engine::EngineError, tauri::Error, std::io::Error);

/// The chat-turn layer's refusals, in the window's words.
impl From<confab_turn::TurnError> for Failure {
    fn from(error: confab_turn::TurnError) -> Self {
        use confab_turn::TurnError;
        match error {
            TurnError::Engine(error) => error.into(),
            TurnError::ModelCannotTake { model, kind } => Failure(format!(
                "{model} does not read {}; load a model that does from the model menu, or remove the attachment.",
                match kind {
                    confab_engine::MediaKind::Image => "images",
                    confab_engine::MediaKind::Audio => "audio",
                    confab_engine::MediaKind::Video => "videos",
                }
            )),
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
