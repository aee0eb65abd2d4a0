//! The prompt budget: what a prompt may use of the context, the rest kept for the reply. The
//! engine fits prompts to it (leaving the oldest turns out), so the rule is the engine's; the
//! front doors (the app's context meter, its document search) ask it here.

pub use confab_engine::{prompt_budget, room_for_reply};
