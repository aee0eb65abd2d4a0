//! What can go wrong talking to the hub, each with what to do about it.

use std::path::PathBuf;

pub type Result<T> = std::result::Result<T, HubError>;

#[derive(Debug, thiserror::Error)]
pub enum HubError {
    #[error("`{0}` is not a repository name: it should look like owner/model (e.g. HuggingFaceTB/SmolLM2-135M-Instruct)")]
    RepoName(String),

    #[error("the hub endpoint `{0}` is not an http(s) URL; set HF_ENDPOINT (or the setting) to e.g. https://huggingface.co")]
    Endpoint(String),

    #[error(
        "{repo} was not found on {endpoint}. Check its name; a private repository also needs a token (HF_TOKEN, or the hub token setting)."
    )]
    RepoNotFound { repo: String, endpoint: String },

    #[error("{repo} has no file `{file}`. Check the name against the repository's files.")]
    FileNotFound { repo: String, file: String },

    #[error("{repo} is gated: accept its licence on its page on the hub, then set a token with read access (HF_TOKEN, or the hub token setting).")]
    Gated { repo: String },

    #[error("{repo}: the hub refused the token (HTTP {status}). Accept the repository's licence on its page on the hub, or check that the token (HF_TOKEN, or the hub token setting) is valid and may read it.")]
    Refused { repo: String, status: u16 },

    #[error("{repo}: architecture `{architecture}` is not one Confab runs (it runs {supported}). Nothing was downloaded.")]
    UnsupportedArchitecture { repo: String, architecture: String, supported: String },

    #[error("{repo} has no model files Confab reads (a config.json with *.safetensors, or a .gguf).")]
    NoModelFiles { repo: String },

    #[error("{repo} has {count} GGUF files; pick one of them: {names}")]
    ChooseFile { repo: String, count: usize, names: String },

    #[error("{file}: the download does not match the hub's checksum twice in a row ({algorithm} {actual}, expected {expected}); it was removed. Try again later, or use another mirror.")]
    Checksum { file: String, algorithm: &'static str, expected: String, actual: String },

    #[error(
        "not enough free space in {dir}: the download needs {needed} more bytes, {available} are free. Free some space and try again."
    )]
    DiskSpace { dir: PathBuf, needed: u64, available: u64 },

    #[error("the disk filled up writing {path}. What was downloaded is kept; free some space and pull again to resume.")]
    DiskFull { path: PathBuf },

    #[error("lost the connection to the hub {attempts} times in a row while downloading {file} ({reason}). What was downloaded is kept; pull again to resume.")]
    Network { file: String, attempts: u32, reason: String },

    #[error("could not reach the hub at {endpoint} ({reason}). Check the connection, or the endpoint (HF_ENDPOINT, or the hub endpoint setting).")]
    Unreachable { endpoint: String, reason: String },

    #[error("the hub answered HTTP {status} for {what}: {message}")]
    Http { what: String, status: u16, message: String },

    #[error("the hub's answer for {what} could not be read: {reason}")]
    BadAnswer { what: String, reason: String },

    #[error("the download was stopped; what was downloaded is kept and resumes next time")]
    Cancelled,

    #[error("{path}: {reason}")]
    Io { path: PathBuf, reason: String },
}

impl HubError {
    pub(crate) fn io(path: impl Into<PathBuf>, e: std::io::Error) -> Self {
        let path = path.into();
        // ENOSPC (and EDQUOT): the partial file stays for a later resume.
        if e.kind() == std::io::ErrorKind::StorageFull || matches!(e.raw_os_error(), Some(28) | Some(122)) {
            return HubError::DiskFull { path };
        }
        HubError::Io { path, reason: e.to_string() }
    }
}
