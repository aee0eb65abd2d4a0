//! The part of the hub's HTTP API Confab uses: model info with its files (sizes, SHA-256),
//! search, and `resolve` for a file's bytes (following redirects, from an offset).

use std::time::Duration;

use reqwest::header::{HeaderMap, AUTHORIZATION, RANGE};
use reqwest::{Response, StatusCode};
use serde::Deserialize;

use crate::error::{HubError, Result};

pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// A hub access token. Its `Debug` never shows it, so it cannot reach a log by accident.
#[derive(Clone)]
pub struct Token(String);

impl Token {
    pub fn new(token: impl Into<String>) -> Option<Self> {
        let token = token.into().trim().to_string();
        (!token.is_empty()).then_some(Token(token))
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(…)")
    }
}

/// Where the hub is and who asks.
#[derive(Debug, Clone)]
pub struct HubOptions {
    /// `https://huggingface.co`, a mirror, or a local test server.
    pub endpoint: String,
    pub token: Option<Token>,
}

impl HubOptions {
    /// `HF_ENDPOINT` and `HF_TOKEN`, as the hub's own tools read them; a setting given here
    /// (non-empty) wins over the environment.
    pub fn from_env(endpoint_setting: Option<&str>, token_setting: Option<&str>) -> Self {
        let nonempty = |v: Option<&str>| v.map(str::trim).filter(|v| !v.is_empty()).map(str::to_string);
        let endpoint = nonempty(endpoint_setting)
            .or_else(|| nonempty(std::env::var("HF_ENDPOINT").ok().as_deref()))
            .unwrap_or_else(|| DEFAULT_ENDPOINT.to_string());
        let token = nonempty(token_setting).or_else(|| nonempty(std::env::var("HF_TOKEN").ok().as_deref())).and_then(Token::new);
        HubOptions { endpoint, token }
    }
}

/// One file of a repository, as `/api/models/{repo}?blobs=true` lists it.
#[derive(Debug, Clone, Deserialize)]
pub struct RepoFile {
    #[serde(rename = "rfilename")]
    pub name: String,
    #[serde(default)]
    pub size: Option<u64>,
    /// Git's blob id (SHA-1 of "blob {len}\0" + bytes): the identity of a small file.
    #[serde(rename = "blobId", default)]
    pub blob_id: Option<String>,
    /// Large files live in LFS, identified by their SHA-256.
    #[serde(default)]
    pub lfs: Option<LfsInfo>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct LfsInfo {
    pub sha256: String,
    pub size: u64,
}

impl RepoFile {
    pub fn size(&self) -> u64 {
        self.lfs.as_ref().map(|l| l.size).or(self.size).unwrap_or(0)
    }

    /// The checksum the hub gives for the file: SHA-256 for LFS files, git's blob SHA-1
    /// otherwise. Also the blob's name in the cache, as huggingface_hub names it.
    pub fn checksum(&self) -> Option<Checksum> {
        match (&self.lfs, &self.blob_id) {
            (Some(lfs), _) => Some(Checksum::Sha256(lfs.sha256.to_lowercase())),
            (None, Some(id)) => Some(Checksum::GitSha1(id.to_lowercase())),
            (None, None) => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checksum {
    Sha256(String),
    GitSha1(String),
}

impl Checksum {
    pub fn hex(&self) -> &str {
        match self {
            Checksum::Sha256(h) | Checksum::GitSha1(h) => h,
        }
    }

    pub fn algorithm(&self) -> &'static str {
        match self {
            Checksum::Sha256(_) => "SHA-256",
            Checksum::GitSha1(_) => "git SHA-1",
        }
    }
}

/// A repository on the hub, as `/api/models/{repo}?blobs=true` describes it: what Confab needs of it.
#[derive(Debug, Clone, Deserialize)]
pub struct RepoInfo {
    pub id: String,
    /// The commit `main` points at.
    #[serde(default)]
    pub sha: Option<String>,
    #[serde(default)]
    pub siblings: Vec<RepoFile>,
    /// `false`, or "auto"/"manual" for a repository behind a licence.
    #[serde(default)]
    pub gated: serde_json::Value,
    /// The hub's summary of config.json (`model_type`, `architectures`).
    #[serde(default)]
    pub config: Option<serde_json::Value>,
    /// For GGUF repositories: `{"architecture": "llama", ...}`.
    #[serde(default)]
    pub gguf: Option<serde_json::Value>,
    #[serde(default)]
    pub tags: Vec<String>,
}

impl RepoInfo {
    pub fn file(&self, name: &str) -> Option<&RepoFile> {
        self.siblings.iter().find(|f| f.name == name)
    }

    pub fn is_gated(&self) -> bool {
        !matches!(self.gated, serde_json::Value::Bool(false) | serde_json::Value::Null)
    }
}

/// One hit of `/api/models?search=`.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
pub struct SearchHit {
    pub id: String,
    #[serde(default)]
    pub downloads: u64,
    #[serde(default)]
    pub likes: u64,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub pipeline_tag: Option<String>,
}

/// A client of one hub endpoint.
#[derive(Debug, Clone)]
pub struct HubClient {
    http: reqwest::Client,
    endpoint: String,
    token: Option<Token>,
}

impl HubClient {
    pub fn new(options: HubOptions) -> Result<Self> {
        let endpoint = options.endpoint.trim_end_matches('/').to_string();
        if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
            return Err(HubError::Endpoint(options.endpoint));
        }
        // reqwest is built without a default crypto provider; ring is the one in the graph.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(20))
            // A stalled transfer counts as a drop (and resumes) rather than hanging forever.
            .read_timeout(Duration::from_secs(60))
            .user_agent(concat!("confab/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| HubError::Unreachable { endpoint: endpoint.clone(), reason: e.to_string() })?;
        Ok(HubClient { http, endpoint, token: options.token })
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Model info with every file's size and checksum.
    pub async fn model_info(&self, repo: &str) -> Result<RepoInfo> {
        check_repo_name(repo)?;
        let url = format!("{}/api/models/{repo}?blobs=true", self.endpoint);
        let response = self.send(&url, None).await?;
        let response = self.check(repo, None, response).await?;
        let body = response.bytes().await.map_err(|e| self.unreachable(e))?;
        serde_json::from_slice(&body).map_err(|e| HubError::BadAnswer { what: format!("{repo}'s info"), reason: e.to_string() })
    }

    /// Repositories whose name matches `query`, most downloaded first.
    pub async fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>> {
        let url = reqwest::Url::parse_with_params(
            &format!("{}/api/models", self.endpoint),
            &[("search", query), ("limit", &limit.to_string()), ("sort", "downloads"), ("direction", "-1")],
        )
        .map_err(|_| HubError::Endpoint(self.endpoint.clone()))?;
        let response = self.send(url.as_str(), None).await?;
        let response = self.check("search", None, response).await?;
        let body = response.bytes().await.map_err(|e| self.unreachable(e))?;
        serde_json::from_slice(&body).map_err(|e| HubError::BadAnswer { what: "search".into(), reason: e.to_string() })
    }

    /// `resolve/{revision}/{file}` from byte `offset` on (a Range request when not 0),
    /// following the hub's redirects (to its CDN). The caller reads the body in chunks and
    /// checks the status: 206 when the range was honoured, 200 when the whole file comes.
    pub(crate) async fn open_file(&self, repo: &str, revision: &str, file: &str, offset: u64) -> Result<Response> {
        let url = format!("{}/{repo}/resolve/{revision}/{}", self.endpoint, encode_path(file));
        let response = self.send(&url, (offset > 0).then_some(offset)).await?;
        if response.status() == StatusCode::RANGE_NOT_SATISFIABLE {
            return Ok(response);
        }
        self.check(repo, Some(file), response).await
    }

    async fn send(&self, url: &str, offset: Option<u64>) -> Result<Response> {
        let mut headers = HeaderMap::new();
        if let Some(token) = &self.token {
            // reqwest drops it on a redirect to another host (the CDN needs none).
            let value = format!("Bearer {}", token.0).parse().map_err(|_| HubError::Refused { repo: url.into(), status: 0 })?;
            headers.insert(AUTHORIZATION, value);
        }
        if let Some(offset) = offset {
            headers.insert(RANGE, format!("bytes={offset}-").parse().expect("a valid header"));
        }
        self.http.get(url).headers(headers).send().await.map_err(|e| self.unreachable(e))
    }

    pub(crate) fn unreachable(&self, e: reqwest::Error) -> HubError {
        HubError::Unreachable { endpoint: self.endpoint.clone(), reason: error_chain(&e) }
    }

    /// Turns the hub's error answers into errors that say what to do. The hub names the
    /// reason in `X-Error-Code` (RepoNotFound, EntryNotFound, GatedRepo, ...).
    async fn check(&self, repo: &str, file: Option<&str>, response: Response) -> Result<Response> {
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let code = response.headers().get("x-error-code").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
        let repo = repo.to_string();
        Err(match (status.as_u16(), code.as_str(), file) {
            (_, "GatedRepo", _) => HubError::Gated { repo },
            (404, "EntryNotFound", Some(file)) => HubError::FileNotFound { repo, file: file.into() },
            (404, _, _) => HubError::RepoNotFound { repo, endpoint: self.endpoint.clone() },
            // The hub answers 401 both for a private repository without a token and for a
            // gated one; its code tells them apart.
            (401, "RepoNotFound", _) => HubError::RepoNotFound { repo, endpoint: self.endpoint.clone() },
            (401, _, _) if self.token.is_none() => HubError::Gated { repo },
            (401 | 403, _, _) => HubError::Refused { repo, status: status.as_u16() },
            (status, _, _) => {
                let message = response.text().await.unwrap_or_default();
                let message: String = message.chars().take(300).collect();
                HubError::Http { what: file.map_or(repo.clone(), |f| format!("{repo}/{f}")), status, message }
            }
        })
    }
}

fn check_repo_name(repo: &str) -> Result<()> {
    let parts: Vec<&str> = repo.split('/').collect();
    let fine = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) && p != "." && p != "..";
    if parts.len() == 2 && parts.iter().all(|p| fine(p)) {
        Ok(())
    } else {
        Err(HubError::RepoName(repo.to_string()))
    }
}

/// A file path for a URL: each segment percent-encoded, the slashes kept.
fn encode_path(file: &str) -> String {
    file.split('/')
        .map(|segment| {
            segment
                .bytes()
                .map(|b| match b {
                    b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
                    _ => format!("%{b:02X}"),
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// reqwest's top-level messages ("error sending request") hide the cause; show the chain.
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_never_show_in_debug_output() {
        let options = HubOptions { endpoint: DEFAULT_ENDPOINT.into(), token: Token::new("hf_secret") };
        assert!(!format!("{options:?}").contains("hf_secret"));
        assert!(Token::new("  ").is_none());
    }

    #[test]
    fn repository_names_are_owner_slash_name() {
        assert!(check_repo_name("HuggingFaceTB/SmolLM2-135M-Instruct").is_ok());
        for bad in ["SmolLM2", "a/b/c", "../etc", "a/..", "a b/c", ""] {
            assert!(matches!(check_repo_name(bad), Err(HubError::RepoName(_))), "{bad}");
        }
    }

    #[test]
    fn file_paths_are_encoded_per_segment() {
        assert_eq!(encode_path("sub dir/model.Q4_K_M.gguf"), "sub%20dir/model.Q4_K_M.gguf");
    }

    #[test]
    fn settings_win_over_the_environment_and_the_endpoint_must_be_http() {
        let options = HubOptions::from_env(Some("http://127.0.0.1:9/"), Some("tok"));
        assert_eq!(options.endpoint, "http://127.0.0.1:9/");
        assert!(HubClient::new(options).unwrap().endpoint() == "http://127.0.0.1:9");
        let bad = HubOptions { endpoint: "ftp://x".into(), token: None };
        assert!(matches!(HubClient::new(bad), Err(HubError::Endpoint(_))));
    }
}
