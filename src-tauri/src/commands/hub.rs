//! Get models: the hub's settings (endpoint, token), search, a repository's files, and the
//! downloads (models/downloads.rs).

use std::path::PathBuf;
use std::sync::Arc;

use confab_engine::TextConfig;
use confab_engine::{runs_here, Architecture};
use confab_hub::{HubClient, HubOptions, RepoInfo};
use confab_paths::AppPaths;
use confab_secrets::SecretStore;
use confab_store::Store;
use tauri::State;

use super::App;
use crate::failure::Failure;
use crate::models::downloads::{Download, Downloads, Source};

/// The store's key for the hub's settings (the endpoint; the token is a secret).
const KEY: &str = "hub";
/// The secret store's name for the hub token.
const TOKEN_SECRET: &str = "hub-token";

/// What the settings pane knows of the hub: never the token itself.
#[derive(Debug, Clone, PartialEq, serde::Serialize, ts_rs::TS)]
pub struct HubSettings {
    /// Empty: `HF_ENDPOINT`, else the default.
    pub endpoint: String,
    /// The endpoint downloads use now.
    pub effective_endpoint: String,
    pub token_set: bool,
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Saved {
    endpoint: String,
}

impl HubSettings {
    pub async fn load(store: &Store, secrets: &SecretStore) -> HubSettings {
        let saved: Saved = store.setting_as(KEY).await.ok().flatten().unwrap_or_default();
        let token_set = matches!(secrets.get(TOKEN_SECRET), Ok(Some(_)));
        let effective_endpoint = HubOptions::from_env(Some(&saved.endpoint), None).endpoint;
        HubSettings { endpoint: saved.endpoint, effective_endpoint, token_set }
    }

    /// Saves the endpoint (checked) and, when given, the token: `Some("")` removes it.
    pub async fn save(store: &Store, secrets: &SecretStore, endpoint: &str, token: Option<&str>) -> Result<(), String> {
        let endpoint = endpoint.trim();
        if !endpoint.is_empty() {
            HubClient::new(HubOptions { endpoint: endpoint.into(), token: None }).map_err(|e| e.to_string())?;
        }
        match token.map(str::trim) {
            Some("") => secrets.delete(TOKEN_SECRET).map_err(|e| e.to_string())?,
            Some(token) if token.chars().any(|c| c.is_whitespace() || c.is_control()) => {
                return Err("The hub token cannot contain spaces; paste it as the hub shows it (hf_…).".into())
            }
            Some(token) => secrets.set(TOKEN_SECRET, token).map_err(|e| e.to_string())?,
            None => {}
        }
        let value = serde_json::to_value(Saved { endpoint: endpoint.into() }).map_err(|e| e.to_string())?;
        store.set_setting(KEY, &value).await.map_err(|e| e.to_string())
    }

    /// A client of the endpoint, with the token when one is set (else `HF_TOKEN`).
    pub async fn client(store: &Store, secrets: &SecretStore) -> Result<HubClient, String> {
        let saved: Saved = store.setting_as(KEY).await.ok().flatten().unwrap_or_default();
        let token = secrets.get(TOKEN_SECRET).map_err(|e| e.to_string())?;
        HubClient::new(HubOptions::from_env(Some(&saved.endpoint), token.as_deref())).map_err(|e| e.to_string())
    }
}

#[tauri::command]
pub async fn hub_settings(state: App<'_>) -> Result<HubSettings, Failure> {
    Ok(HubSettings::load(&state.store, &state.secrets).await)
}

/// `token`: null leaves it as it is, "" removes it.
#[tauri::command]
pub async fn save_hub_settings(state: App<'_>, endpoint: String, token: Option<String>) -> Result<HubSettings, Failure> {
    HubSettings::save(&state.store, &state.secrets, &endpoint, token.as_deref()).await?;
    Ok(HubSettings::load(&state.store, &state.secrets).await)
}

/// One search hit, with whether the engine runs what its tags say it is.
#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
pub struct HubModel {
    pub id: String,
    pub downloads: u64,
    pub likes: u64,
    /// "gguf", "safetensors", "mlx": what it comes as.
    pub formats: Vec<String>,
    /// An architecture tag the engine runs.
    pub runs: bool,
}

const FORMAT_TAGS: &[&str] = &["gguf", "safetensors", "mlx"];

/// Repositories matching `query` that come in a format the engine reads, the ones it runs first.
#[tauri::command]
pub async fn search_hub(state: App<'_>, query: String) -> Result<Vec<HubModel>, Failure> {
    let client = HubSettings::client(&state.store, &state.secrets).await?;
    let hits = client.search(query.trim(), 50).await.map_err(|e| e.to_string())?;
    let mut models: Vec<HubModel> = hits
        .into_iter()
        .filter_map(|hit| {
            let formats: Vec<String> = hit.tags.iter().filter(|t| FORMAT_TAGS.contains(&t.as_str())).cloned().collect();
            let runs = hit.tags.iter().any(|tag| runs_here(Architecture::Tag(tag)));
            (!formats.is_empty()).then_some(HubModel { id: hit.id, downloads: hit.downloads, likes: hit.likes, formats, runs })
        })
        .collect();
    models.sort_by_key(|m| !m.runs);
    Ok(models)
}

/// A repository as Get models shows it.
#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
pub struct RepoDetails {
    pub repo: String,
    /// config.json's `model_type`, or the GGUF's `general.architecture`.
    pub architecture: Option<String>,
    pub runs: bool,
    pub gated: bool,
    /// The files one Download fetches for the whole model (a folder), with their total; empty
    /// for a repository of GGUF files, each downloaded alone.
    pub model_files: Vec<String>,
    pub model_bytes: u64,
    pub files: Vec<RepoFileView>,
    /// This machine's memory, for "fits".
    pub memory_bytes: u64,
}

#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
pub struct RepoFileView {
    pub name: String,
    pub size: u64,
    /// "Q4_K_M", "4-bit", ...
    pub quantization: Option<String>,
    /// A GGUF file, downloadable alone.
    pub gguf: bool,
    pub fits: bool,
}

#[tauri::command]
pub async fn repo_details(state: App<'_>, repo: String) -> Result<RepoDetails, Failure> {
    let client = HubSettings::client(&state.store, &state.secrets).await?;
    let info = client.model_info(repo.trim()).await.map_err(|e| e.to_string())?;
    Ok(details(&info, confab_engine::physical_memory()))
}

/// Whether a download of `bytes` of weights fits in `memory`, by the picker's rule
/// (`model::memory::fits_in_memory`): with the keys/values of its whole context where the
/// repository's config.json tells them (`config`).
pub fn fits(bytes: u64, config: Option<&TextConfig>, memory: u64) -> bool {
    let needed = confab_engine::memory_needed(bytes, config.map(|c| (c, c.max_position)));
    confab_engine::fits_in_memory(needed, memory)
}

/// A repository's config.json as the engine reads it, where it does.
fn text_config(info: &RepoInfo) -> Option<TextConfig> {
    let json = info.config.as_ref()?;
    TextConfig::from_hf_json(json, std::path::Path::new("config.json"), confab_engine::config_defaults).ok()
}

fn details(info: &RepoInfo, memory: u64) -> RepoDetails {
    let config_type = info.config.as_ref().and_then(|c| c.get("model_type")).and_then(|t| t.as_str());
    let gguf_arch = info.gguf.as_ref().and_then(|g| g.get("architecture")).and_then(|a| a.as_str());
    let runs =
        config_type.is_some_and(|t| runs_here(Architecture::ModelType(t))) || gguf_arch.is_some_and(|a| runs_here(Architecture::Gguf(a)));
    let folder = confab_hub::choose_files(&info.id, info, &[]).ok().filter(|files| !files.iter().any(|f| f.name.ends_with(".gguf")));
    let model_files: Vec<String> = folder.iter().flatten().map(|f| f.name.clone()).collect();
    let model_bytes = folder.iter().flatten().map(|f| f.size()).sum();
    let repo_quantization = bits_in_name(&info.id);
    let config = text_config(info);
    let files = info
        .siblings
        .iter()
        .map(|f| {
            let gguf = f.name.ends_with(".gguf");
            RepoFileView {
                name: f.name.clone(),
                size: f.size(),
                quantization: if gguf {
                    gguf_quantization(&f.name)
                } else if f.name.ends_with(".safetensors") {
                    repo_quantization.clone()
                } else {
                    None
                },
                gguf,
                // A GGUF carries its own configuration, unknown until downloaded.
                fits: if gguf { fits(f.size(), None, memory) } else { fits(model_bytes, config.as_ref(), memory) },
            }
        })
        .collect();
    RepoDetails {
        repo: info.id.clone(),
        architecture: config_type.or(gguf_arch).map(str::to_string),
        runs,
        gated: info.is_gated(),
        model_files,
        model_bytes,
        files,
        memory_bytes: memory,
    }
}

/// "mlx-community/Qwen3-4B-4bit" → "4-bit".
fn bits_in_name(repo: &str) -> Option<String> {
    let lower = repo.to_lowercase();
    let at = lower.find("bit")?;
    let digits: String = lower[..at].chars().rev().take_while(|c| c.is_ascii_digit()).collect();
    (!digits.is_empty()).then(|| format!("{}-bit", digits.chars().rev().collect::<String>()))
}

/// "Qwen3-4B-Q4_K_M.gguf" → "Q4_K_M"; "model.BF16.gguf" → "BF16".
fn gguf_quantization(name: &str) -> Option<String> {
    let stem = name.rsplit('/').next()?.strip_suffix(".gguf")?;
    stem.split(['-', '.'])
        .rev()
        .find(|part| {
            let upper = part.to_uppercase();
            let quant = (upper.starts_with('Q') || upper.starts_with("IQ")) && upper.chars().any(|c| c.is_ascii_digit());
            quant || ["F16", "BF16", "F32"].contains(&upper.as_str())
        })
        .map(str::to_uppercase)
}

async fn source(state: &App<'_>) -> Result<Source, Failure> {
    Ok(Source { client: HubSettings::client(&state.store, &state.secrets).await?, cache_dir: AppPaths::hf_hub_cache() })
}

#[tauri::command]
pub fn list_downloads(downloads: State<'_, Arc<Downloads>>) -> Vec<Download> {
    downloads.list()
}

/// Downloads `repo` (its model files, or only `files`) into the Hugging Face cache.
#[tauri::command]
pub async fn start_download(
    state: App<'_>,
    downloads: State<'_, Arc<Downloads>>,
    repo: String,
    files: Vec<String>,
) -> Result<Download, Failure> {
    let source = source(&state).await?;
    Ok(downloads.start(source, repo.trim(), &files))
}

#[tauri::command]
pub fn pause_download(downloads: State<'_, Arc<Downloads>>, id: String) {
    downloads.pause(&id);
}

#[tauri::command]
pub async fn resume_download(state: App<'_>, downloads: State<'_, Arc<Downloads>>, id: String) -> Result<Download, Failure> {
    let download = downloads.get(&id).ok_or("That download is no longer in the list; start it again from Get models.")?;
    let source = source(&state).await?;
    Ok(downloads.start(source, &download.repo, &download.files))
}

#[tauri::command]
pub fn cancel_download(downloads: State<'_, Arc<Downloads>>, id: String) {
    downloads.cancel(&id, &AppPaths::hf_hub_cache());
}

/// Where downloads land, for the picker's filter.
pub fn cache_dir() -> PathBuf {
    AppPaths::hf_hub_cache()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantization_is_read_from_names() {
        assert_eq!(gguf_quantization("Qwen3-4B-Q4_K_M.gguf").as_deref(), Some("Q4_K_M"));
        assert_eq!(gguf_quantization("sub/model.BF16.gguf").as_deref(), Some("BF16"));
        assert_eq!(gguf_quantization("smollm2-135m-instruct-iq4_xs.gguf").as_deref(), Some("IQ4_XS"));
        assert_eq!(gguf_quantization("model.gguf"), None);
        assert_eq!(bits_in_name("mlx-community/Qwen3-4B-4bit").as_deref(), Some("4-bit"));
        assert_eq!(bits_in_name("HuggingFaceTB/SmolLM2-135M-Instruct"), None);
    }

    #[test]
    fn fitting_leaves_room_for_the_system() {
        assert!(fits(1 << 30, None, 8 << 30));
        assert!(!fits(7 << 30, None, 8 << 30));
    }

    #[test]
    fn the_hub_token_lives_in_the_secret_store_and_the_page_learns_only_that_it_is_set() {
        let dir = tempfile::tempdir().unwrap();
        let secrets = SecretStore::file(dir.path());
        let token = "hf_tok_3c9d1e";
        tauri::async_runtime::block_on(async {
            let store = Store::open(dir.path().join("confab.db")).await.unwrap();
            HubSettings::save(&store, &secrets, "http://127.0.0.1:9", Some(token)).await.unwrap();
            let seen = HubSettings::load(&store, &secrets).await;
            assert!(seen.token_set);
            assert_eq!(seen.endpoint, "http://127.0.0.1:9");
            assert!(!serde_json::to_string(&seen).unwrap().contains(token), "not sent to the page");
            let database: Vec<u8> =
                ["confab.db", "confab.db-wal"].iter().filter_map(|f| std::fs::read(dir.path().join(f)).ok()).flatten().collect();
            assert!(!database.windows(token.len()).any(|w| w == token.as_bytes()), "not in SQLite");
            // Saving the endpoint alone keeps the token; "" removes it.
            HubSettings::save(&store, &secrets, "", None).await.unwrap();
            assert!(HubSettings::load(&store, &secrets).await.token_set);
            HubSettings::save(&store, &secrets, "", Some("")).await.unwrap();
            assert!(!HubSettings::load(&store, &secrets).await.token_set);
            let bad = HubSettings::save(&store, &secrets, "ftp://mirror", None).await.unwrap_err();
            assert!(bad.contains("http"), "{bad}");
            assert_eq!(HubSettings::load(&store, &secrets).await.endpoint, "", "a rejected save changes nothing");
        });
    }
}
