pub mod bench;
pub mod chat;
pub mod common;
pub mod doctor;
pub mod generate;
pub mod models;
