//! confab-turn: what one chat turn is, written once.
//!
//! The app, the server's APIs and the CLI are front doors: each translates its own wire shape
//! (IPC, Chat Completions, Messages, Responses, the command line) into a [`ChatTurn`], sends the
//! engine request it makes, and reads the reply back through a [`ReplyReader`]. The rules about
//! a turn live here, each in one file:
//!
//! - `tools.rs`: which tools a turn may offer, and the tool choice (auto, required, a named
//!   tool) held by the model's call grammar;
//! - `thinking.rs`: the thinking switch and the reasoning effort, as template switches;
//! - `sampling.rs`: sampling over the model's defaults, and the reply's token limit;
//! - `budget.rs`: the prompt budget (the context less the room kept for the reply);
//! - `reader.rs`: the reply read back as reasoning, text and tool calls, with call ids;
//! - `capability.rs`: whether a model takes an image, a clip or a video.
//!
//! Errors are [`TurnError`] values with the facts; each front door words them for its users.

mod budget;
mod capability;
mod error;
mod reader;
mod sampling;
mod thinking;
mod tools;
mod turn;

pub use budget::{prompt_budget, room_for_reply};
pub use capability::takes;
pub use error::TurnError;
pub use reader::{call_id, ReplyReader, TurnEvent, WholeReply};
pub use sampling::{reply_token_limit, sampling_params};
pub use thinking::{checked_switches, Thinking};
pub use tools::{ToolChoice, ToolDefinition, Tools, MAX_TOOLS};
pub use turn::ChatTurn;
