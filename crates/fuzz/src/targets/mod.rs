//! The targets' bodies, one module per crate they exercise.

pub mod documents;
pub mod models;
pub mod text;
