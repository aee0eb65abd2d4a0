//! What a message is and where it is in its life ([`Role`], [`MessageStatus`]), and the check
//! that a message is a reply in progress: apart from `messages`, so that the modules that
//! `messages` loads (tool calls) can check a reply without importing it back.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use sqlx::{Executor, Sqlite};
use ts_rs::TS;

use crate::error::{Result, StoreError};
use crate::ids::MessageId;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

/// Where a message is in its life. Only assistant replies are ever anything but `Complete`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum MessageStatus {
    /// A reply being generated: `append_reply` adds to it, `finish_reply` ends it.
    Streaming,
    /// Finished normally (and every user or system message).
    Complete,
    /// The user stopped the generation; the text so far is kept.
    Stopped,
    /// Generation failed; `Message::error` says why, the text so far is kept.
    Error,
    /// Cut off: still `Streaming` when the process died (marked by `recover_interrupted`), or
    /// a provider's stream broke (`Message::error` says how). The text so far is kept.
    Interrupted,
}

macro_rules! string_enum {
    ($type:ty, $what:literal, { $($variant:path => $text:literal),* $(,)? }) => {
        impl $type {
            pub fn as_str(self) -> &'static str {
                match self { $($variant => $text),* }
            }
        }
        impl FromStr for $type {
            type Err = StoreError;
            fn from_str(text: &str) -> Result<Self> {
                match text {
                    $($text => Ok($variant),)*
                    other => Err(StoreError::InvalidInput(format!(
                        concat!("unknown ", $what, " {:?}"), other
                    ))),
                }
            }
        }
        impl fmt::Display for $type {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

string_enum!(Role, "role", {
    Role::System => "system",
    Role::User => "user",
    Role::Assistant => "assistant",
});

string_enum!(MessageStatus, "message status", {
    MessageStatus::Streaming => "streaming",
    MessageStatus::Complete => "complete",
    MessageStatus::Stopped => "stopped",
    MessageStatus::Error => "error",
    MessageStatus::Interrupted => "interrupted",
});

/// Lets other modules give their own enums the same text form.
pub(crate) use string_enum;

/// `Ok` if `id` is a streaming reply, else why not (`NotFound` or `NotStreaming`).
pub(crate) async fn check_streaming<'e>(executor: impl Executor<'e, Database = Sqlite>, id: MessageId) -> Result<()> {
    let status: Option<String> =
        sqlx::query_scalar("SELECT status FROM messages WHERE id = ?1").bind(id.0).fetch_optional(executor).await?;
    match status {
        None => Err(StoreError::not_found("message", id)),
        Some(status) => match status.parse()? {
            MessageStatus::Streaming => Ok(()),
            status => Err(StoreError::NotStreaming { id, status: status.as_str() }),
        },
    }
}
