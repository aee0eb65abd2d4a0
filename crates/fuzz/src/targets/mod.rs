//! The targets' bodies, one module per crate they exercise.

pub mod documents;
pub mod media;
pub mod models;
pub mod protocols;
pub mod text;
