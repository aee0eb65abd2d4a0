//! Why a turn cannot be asked as it is: facts, never a front door's words (no field names of
//! an API, no panes, no flags). Each front door says them in its own terms.

use confab_engine::EngineError;

#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error("{count} tools given; at most {max} are allowed ({}).", confab_limits::TURN_TOOLS.name)]
    TooManyTools { count: usize, max: usize },
    /// The tool at `index` has a name templates and clients cannot carry.
    #[error("the tool name `{name}` is not valid: use 1 to 64 letters, digits, underscores or dashes.")]
    ToolName { index: usize, name: String },
    #[error("two tools are named `{name}`; tool names must differ.")]
    DuplicateTool { index: usize, name: String },
    #[error("the tool's parameters must be a JSON Schema object.")]
    ToolParameters { index: usize },
    #[error("the tool choice names `{name}`, which is not among the turn's tools ({}).", available.join(", "))]
    UnknownChoice { name: String, available: Vec<String> },
    #[error("the tool choice asks for a call, but the turn has no tools.")]
    ChoiceWithoutTools,
    /// A reply that must call a tool is held to the call's grammar; it cannot follow another.
    #[error("a reply that must call a tool cannot also follow a response format; ask for one or the other.")]
    CallAndFormat,
    #[error("`{name}` cannot be set as a template switch.")]
    Switch { name: String },
    /// The most tokens a reply may have, out of range.
    #[error("the reply's token limit is {value}; it must be 1 or more.")]
    ReplyTokens { value: i64 },
    /// A sampling setting the engine refuses (it names the setting).
    #[error(transparent)]
    Engine(#[from] EngineError),
}
