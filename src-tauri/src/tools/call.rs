//! A tool call as the model makes it and as the user answers its card: shared by the replies
//! that read calls (chat/local_model.rs, chat/remote_model.rs), the rounds that run them
//! (chat/tool_rounds.rs) and the state that waits for decisions.

/// A call as the model made it: through the engine's reply parser, or a provider's tools API.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCall {
    /// The provider's id for the call; `None` for a local model (one is made up).
    pub id: Option<String>,
    pub name: String,
    /// A JSON object, or the text that did not parse as one.
    pub arguments: Result<serde_json::Map<String, serde_json::Value>, String>,
}

/// What the user decided on a call, as its card sends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ToolDecisionInput {
    /// Run this call.
    Once,
    /// Run this call and, from now on, every call of this tool without asking.
    Always,
    Deny,
}
