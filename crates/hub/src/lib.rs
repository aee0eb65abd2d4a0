//! confab-hub: models from the Hugging Face hub, or any endpoint speaking its API (a mirror, the
//! test suite's loopback server). Model info and search; downloads that resume (across drops
//! and restarts), verify every file against the hub's checksums, check the architecture and the
//! free space before fetching weights, and land in the Hugging Face cache layout.
//!
//! The engine is not a dependency: callers say which architectures it runs.

pub mod api;
pub mod cache;
pub mod error;
pub mod lock;
pub mod pull;

pub use api::{HubClient, HubOptions, RepoFile, RepoInfo, SearchHit, Token, DEFAULT_ENDPOINT};
pub use cache::RepoCache;
pub use error::{HubError, Result};
pub use pull::{choose_files, pull, Progress, PullOptions, Pulled};
