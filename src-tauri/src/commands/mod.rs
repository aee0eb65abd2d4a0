//! The Tauri commands, by subject. Each returns `Result<_, Failure>`: the message is what the
//! window shows. Every command is listed once, in list.rs.

#[macro_use]
mod list;

pub mod attachments;
pub mod chat;
pub mod conversations;
pub mod desktop;
pub mod hub;
pub mod models;
pub mod providers;
pub mod runtime;
pub mod settings;
pub mod tools;

use std::sync::Arc;

use crate::state::AppState;

/// The managed state, as each command receives it.
pub type App<'a> = tauri::State<'a, Arc<AppState>>;
