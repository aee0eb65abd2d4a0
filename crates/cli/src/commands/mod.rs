pub mod bench;
pub mod bench_session;
pub mod chat;
pub mod common;
pub mod doctor;
pub mod export_tokenizer;
pub mod generate;
pub mod models;
