//! Store tests, each on a real SQLite file in a temporary folder. One binary (faster to build);
//! `kill.rs` also re-runs this binary as its writer child.

mod attachments;
mod conversations;
mod document_index;
mod kill;
mod messages;
mod open;
mod replies;
mod responses;
mod retrieval_set;
mod scale;
mod search;
mod settings;
mod tool_calls;

use confab_store::{Conversation, NewConversation, Store};

/// A fresh store in its own temporary folder (kept alive by the returned guard).
pub async fn store() -> (Store, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("history.sqlite")).await.unwrap();
    (store, dir)
}

pub async fn conversation(store: &Store, title: &str) -> Conversation {
    store.create_conversation(NewConversation { title: title.into(), ..Default::default() }).await.unwrap()
}

/// The store is healthy: SQLite integrity, foreign keys and the full-text index all check out.
pub async fn assert_healthy(store: &Store) {
    let problems = store.check_integrity().await.unwrap();
    assert!(problems.is_empty(), "integrity problems: {problems:?}");
}
