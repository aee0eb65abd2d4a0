//! A chat turn, from Send to the saved reply: the branch as the model reads it (`turns`), the
//! documents fitted or searched for it (`document_search`), the one reply that streams to the
//! window and is saved however it ends (`reply`), written by the loaded model (`local_model`) or
//! a provider's (`remote_model`), with its tool-call rounds (`tool_rounds`), the events it
//! sends (`events`), the conversation's title (`title`) and the messages as the window shows
//! them (`views`). It stands above the app's state (`crate::state`); the features below hold
//! what it reads.

pub mod document_search;
pub mod events;
pub mod local_model;
pub mod remote_model;
pub mod reply;
pub mod title;
pub mod tool_rounds;
pub mod turns;
pub mod views;
