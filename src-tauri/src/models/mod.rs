//! Models in the app: the one loaded for chat (`slot`), how much of its context the open chat
//! takes (`context_meter`), the embedding model loaded beside it to search documents
//! (`embedder`), and models downloading from the hub (`downloads`).

pub mod context_meter;
pub mod downloads;
pub mod embedder;
pub mod slot;
