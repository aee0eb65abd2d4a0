//! Remote providers: OpenAI-compatible servers on other machines (vLLM, llama.cpp's server,
//! Ollama, LM Studio, another Confab's `confab serve`, a hosted API) that the user adds in
//! Settings. Nothing is sent anywhere until one is added and one of its models is picked.
//!
//! The list (names, URLs, the models each lists and the inputs the user marked) is one JSON
//! value in the store; each provider's API key is in the secret store under `provider:<id>`,
//! never in SQLite, a log, or anything sent to the page (which only learns whether a key is set).

use confab_media::MediaKind;
use confab_remote::{Client, RemoteError, RemoteModel};
use confab_secrets::SecretStore;
use confab_store::{Attachment, Store};

/// Where the window edits providers and their keys, for the messages that send people there.
pub const PROVIDERS_IN_SETTINGS: &str = "Settings › Advanced › Remote providers";

/// A provider's error as the window says it: the client (`confab-remote`, which knows no
/// window) says what to check, and this adds where.
pub fn error_message(error: &RemoteError) -> String {
    match error {
        RemoteError::Unauthorized { server, status, message } => {
            format!("{server} refused the API key (HTTP {status}): {message}. Check the provider's key in {PROVIDERS_IN_SETTINGS}.")
        }
        _ => error.to_string(),
    }
}

/// The store's key for the provider list and the picked remote model.
const KEY: &str = "providers";
/// The longest provider name: enough for any real one, short enough for the header's badge.
const MAX_NAME_CHARS: usize = 60;

fn secret_name(provider: u32) -> String {
    format!("provider:{provider}")
}

/// What is saved (without any key).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Providers {
    pub providers: Vec<Provider>,
    /// The remote model replies go to; `None`: the local model.
    pub selected: Option<RemoteChoice>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Provider {
    pub id: u32,
    pub name: String,
    /// As the user typed it; the client normalises it (`/v1` added when there is no path).
    pub base_url: String,
    /// What `GET /v1/models` listed at the last refresh.
    #[serde(default)]
    pub models: Vec<ProviderModel>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, ts_rs::TS)]
pub struct ProviderModel {
    pub id: String,
    pub context_length: Option<u64>,
    pub vision: bool,
    pub audio: bool,
    /// True when the endpoint listed the model's input kinds; false: `vision` and `audio`
    /// are the user's marks.
    pub inputs_reported: bool,
}

/// The remote model replies go to.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, ts_rs::TS)]
pub struct RemoteChoice {
    pub provider: u32,
    pub model: String,
}

/// A provider as the page sees it, without its key.
#[derive(Debug, Clone, PartialEq, serde::Serialize, ts_rs::TS)]
pub struct ProviderView {
    pub id: u32,
    pub name: String,
    pub base_url: String,
    pub has_key: bool,
    pub models: Vec<ProviderModel>,
}

/// The providers, the remote model picked (`None`: replies go to the local model), and where
/// keys are kept.
#[derive(Debug, Clone, PartialEq, serde::Serialize, ts_rs::TS)]
pub struct ProvidersView {
    pub providers: Vec<ProviderView>,
    pub selected: Option<RemoteChoice>,
    /// Where keys are kept, in words ("the Secret Service", a file readable only by you).
    pub key_store: String,
}

/// A provider as the settings pane sends it. `api_key`: `None` keeps the saved one, an empty
/// string removes it.
#[derive(Debug, Clone, serde::Deserialize, ts_rs::TS)]
pub struct ProviderInput {
    pub id: Option<u32>,
    pub name: String,
    pub base_url: String,
    pub api_key: Option<String>,
}

/// Everything a reply through a provider needs, read when the reply starts.
#[derive(Clone)]
pub struct RemoteTarget {
    pub provider: String,
    pub client: Client,
    pub model: ProviderModel,
}

impl Providers {
    /// The saved list; an unreadable one is empty (and says so in the log).
    pub async fn load(store: &Store) -> Providers {
        crate::settings::load_value(store, KEY, "provider list").await
    }

    async fn save(&self, store: &Store) -> Result<(), String> {
        crate::settings::save_value(store, KEY, self).await
    }

    pub fn view(&self, secrets: &SecretStore) -> ProvidersView {
        let providers = self
            .providers
            .iter()
            .map(|p| ProviderView {
                id: p.id,
                name: p.name.clone(),
                base_url: p.base_url.clone(),
                // A key that cannot be read is shown as not set: the user enters it again.
                has_key: matches!(secrets.get(&secret_name(p.id)), Ok(Some(_))),
                models: p.models.clone(),
            })
            .collect();
        ProvidersView { providers, selected: self.selected.clone(), key_store: secrets.describe() }
    }

    fn find(&self, id: u32) -> Result<&Provider, String> {
        self.providers.iter().find(|p| p.id == id).ok_or_else(|| "That provider is gone; it may have been removed.".to_string())
    }

    fn find_mut(&mut self, id: u32) -> Result<&mut Provider, String> {
        self.providers.iter_mut().find(|p| p.id == id).ok_or_else(|| "That provider is gone; it may have been removed.".to_string())
    }

    /// Adds or edits a provider: its key to the secret store, the rest to SQLite. Returns its id.
    pub async fn put(&mut self, input: ProviderInput, store: &Store, secrets: &SecretStore) -> Result<u32, String> {
        let name = input.name.split_whitespace().collect::<Vec<_>>().join(" ");
        if name.is_empty() {
            return Err("Give the provider a name, such as \"Workstation\" or \"vLLM cluster\".".into());
        }
        if name.chars().count() > MAX_NAME_CHARS {
            return Err(format!("The provider's name is too long; keep it under {MAX_NAME_CHARS} characters."));
        }
        let key = input.api_key.as_deref().map(str::trim);
        if key.is_some_and(|k| k.chars().any(|c| c.is_whitespace() || c.is_control())) {
            return Err("The API key cannot contain spaces or line breaks; paste the key alone.".into());
        }
        // The URL is checked the way the client will use it (a clear message when it is wrong).
        let base_url = input.base_url.trim().to_string();
        Client::new(&base_url, None).map_err(|e| e.to_string())?;

        let mut next = self.clone();
        let id = match input.id {
            Some(id) => {
                let provider = next.find_mut(id)?;
                provider.name = name;
                provider.base_url = base_url;
                id
            }
            None => {
                let id = next.providers.iter().map(|p| p.id).max().unwrap_or(0) + 1;
                next.providers.push(Provider { id, name, base_url, models: Vec::new() });
                id
            }
        };
        match key {
            None => {}
            Some("") => secrets.delete(&secret_name(id)).map_err(|e| e.to_string())?,
            Some(key) => secrets.set(&secret_name(id), key).map_err(|e| e.to_string())?,
        }
        next.save(store).await?;
        *self = next;
        Ok(id)
    }

    /// Removes a provider and its key; a chat on one of its models goes back to the local model.
    pub async fn remove(&mut self, id: u32, store: &Store, secrets: &SecretStore) -> Result<(), String> {
        let mut next = self.clone();
        next.providers.retain(|p| p.id != id);
        if next.selected.as_ref().is_some_and(|s| s.provider == id) {
            next.selected = None;
        }
        secrets.delete(&secret_name(id)).map_err(|e| e.to_string())?;
        next.save(store).await?;
        *self = next;
        Ok(())
    }

    /// A client for the provider, with its key.
    pub fn client(&self, id: u32, secrets: &SecretStore) -> Result<(String, Client), String> {
        let provider = self.find(id)?;
        let key = secrets.get(&secret_name(id)).map_err(|e| e.to_string())?;
        let client = Client::new(&provider.base_url, key.as_deref()).map_err(|e| e.to_string())?;
        Ok((provider.name.clone(), client))
    }

    /// Replaces the provider's model list with what the endpoint listed, keeping the user's
    /// marks for models it still lists.
    pub async fn set_models(&mut self, id: u32, listed: Vec<RemoteModel>, store: &Store) -> Result<(), String> {
        let mut next = self.clone();
        let provider = next.find_mut(id)?;
        provider.models = listed
            .into_iter()
            .map(|model| {
                let marked = provider.models.iter().find(|m| m.id == model.id && !m.inputs_reported);
                let (vision, audio, inputs_reported) = match (model.inputs, marked) {
                    (Some(inputs), _) => (inputs.vision, inputs.audio, true),
                    (None, Some(marked)) => (marked.vision, marked.audio, false),
                    (None, None) => (false, false, false),
                };
                ProviderModel { id: model.id, context_length: model.context_length, vision, audio, inputs_reported }
            })
            .collect();
        next.save(store).await?;
        *self = next;
        Ok(())
    }

    /// The user's marks for what a model takes (for endpoints that do not say).
    pub async fn mark_inputs(&mut self, id: u32, model: &str, vision: bool, audio: bool, store: &Store) -> Result<(), String> {
        let mut next = self.clone();
        let provider = next.find_mut(id)?;
        let name = provider.name.clone();
        let Some(entry) = provider.models.iter_mut().find(|m| m.id == model) else {
            return Err(format!("{name} does not list {model}; refresh its models."));
        };
        if entry.inputs_reported {
            return Err(format!("{name} itself says what {model} takes; refresh its models to update it."));
        }
        (entry.vision, entry.audio) = (vision, audio);
        next.save(store).await?;
        *self = next;
        Ok(())
    }

    /// Picks the model replies go to: a provider's, or (`None`) the local one.
    pub async fn select(&mut self, choice: Option<RemoteChoice>, store: &Store) -> Result<(), String> {
        if let Some(choice) = &choice {
            let provider = self.find(choice.provider)?;
            if !provider.models.iter().any(|m| m.id == choice.model) {
                return Err(format!("{} does not list {}; refresh its models in Settings.", provider.name, choice.model));
            }
        }
        if self.selected == choice {
            return Ok(());
        }
        let next = Providers { selected: choice, ..self.clone() };
        next.save(store).await?;
        *self = next;
        Ok(())
    }

    /// Where replies go when a remote model is picked (with its provider's key), else `None`.
    pub fn target(&self, secrets: &SecretStore) -> Result<Option<RemoteTarget>, String> {
        let Some(choice) = &self.selected else { return Ok(None) };
        let (provider, client) = self.client(choice.provider, secrets)?;
        let model = self.find(choice.provider)?.models.iter().find(|m| m.id == choice.model).cloned();
        let Some(model) = model else {
            return Err(format!("{provider} no longer lists {}; pick another model.", choice.model));
        };
        Ok(Some(RemoteTarget { provider, client, model }))
    }
}

impl RemoteTarget {
    /// A model not marked as reading images (or audio) is sent none; the message says where to
    /// mark it.
    pub fn check_takes(&self, attachment: &Attachment) -> Result<(), String> {
        let name = attachment.original_name.as_deref().unwrap_or("this file");
        // Documents go as text, which every model reads.
        if crate::attachments::documents::is_document(attachment) {
            return Ok(());
        }
        let (ok, what, mark) = match MediaKind::of_mime(&attachment.mime) {
            Some(MediaKind::Image) => (self.model.vision, "images", "reads images"),
            Some(MediaKind::Audio) => (self.model.audio, "audio", "hears audio"),
            // OpenAI-style chat APIs have no video content part.
            Some(MediaKind::Video) => (false, "video", ""),
            None => (false, "this kind of file", ""),
        };
        if ok {
            return Ok(());
        }
        let how = if self.model.inputs_reported || mark.is_empty() {
            "Pick a model that takes it, or remove the attachment.".to_string()
        } else {
            format!("If it does, mark it as one that {mark} in {PROVIDERS_IN_SETTINGS}; otherwise remove the attachment.")
        };
        Err(format!("{} on {} is not marked as taking {what}, so {name} is not sent. {how}", self.model.id, self.provider))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "sk-provider-9d41c7e2";

    #[test]
    fn a_refused_key_says_where_the_window_keeps_it() {
        let refused =
            RemoteError::Unauthorized { server: "10.0.0.5:8000".into(), status: 401, message: "Incorrect API key provided".into() };
        let message = error_message(&refused);
        assert!(
            message.contains("Incorrect API key provided") && message.contains("in Settings › Advanced › Remote providers."),
            "{message}"
        );
        let unreachable = RemoteError::Unreachable { server: "10.0.0.5:8000".into(), detail: "refused".into() };
        assert_eq!(error_message(&unreachable), unreachable.to_string());
    }

    fn input(id: Option<u32>, name: &str, key: Option<&str>) -> ProviderInput {
        ProviderInput { id, name: name.into(), base_url: "http://10.0.0.5:8000/v1".into(), api_key: key.map(str::to_string) }
    }

    /// Every byte SQLite wrote for this database: the file and its write-ahead log.
    fn database_bytes(dir: &std::path::Path) -> Vec<u8> {
        ["confab.db", "confab.db-wal"].iter().filter_map(|f| std::fs::read(dir.join(f)).ok()).flatten().collect()
    }

    fn contains(haystack: &[u8], needle: &str) -> bool {
        haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
    }

    fn listed(id: &str, inputs: Option<(bool, bool)>) -> RemoteModel {
        RemoteModel {
            id: id.into(),
            owned_by: None,
            context_length: Some(4096),
            inputs: inputs.map(|(vision, audio)| confab_remote::Inputs { vision, audio }),
        }
    }

    #[test]
    fn providers_persist_without_their_key_which_goes_to_the_secret_store() {
        let dir = tempfile::tempdir().unwrap();
        let secrets = SecretStore::file(dir.path());
        tauri::async_runtime::block_on(async {
            let store = Store::open(dir.path().join("confab.db")).await.unwrap();
            let mut providers = Providers::load(&store).await;
            assert_eq!(providers, Providers::default(), "none until the user adds one");
            let id = providers.put(input(None, "  Work   station ", Some(SECRET)), &store, &secrets).await.unwrap();
            let second = providers.put(input(None, "Cluster", None), &store, &secrets).await.unwrap();
            assert_eq!((id, second), (1, 2));

            assert!(!contains(&database_bytes(dir.path()), SECRET), "the key is nowhere in the database file or its log");
            assert_eq!(secrets.get("provider:1").unwrap().as_deref(), Some(SECRET));
            let view = providers.view(&secrets);
            assert!(!serde_json::to_string(&view).unwrap().contains(SECRET), "the page never gets the key");
            assert_eq!(
                view.providers.iter().map(|p| (p.name.as_str(), p.has_key)).collect::<Vec<_>>(),
                [("Work station", true), ("Cluster", false)]
            );

            // Reopened: the same list; an edit without a key keeps it, an empty key removes it.
            let mut reloaded = Providers::load(&store).await;
            assert_eq!(reloaded, providers);
            reloaded.put(input(Some(1), "Workstation", None), &store, &secrets).await.unwrap();
            assert_eq!(secrets.get("provider:1").unwrap().as_deref(), Some(SECRET), "kept");
            reloaded.put(input(Some(1), "Workstation", Some("")), &store, &secrets).await.unwrap();
            assert_eq!(secrets.get("provider:1").unwrap(), None, "removed");

            reloaded.put(input(Some(2), "Cluster", Some("sk-2")), &store, &secrets).await.unwrap();
            reloaded.set_models(2, vec![listed("llama", None)], &store).await.unwrap();
            reloaded.select(Some(RemoteChoice { provider: 2, model: "llama".into() }), &store).await.unwrap();
            reloaded.remove(2, &store, &secrets).await.unwrap();
            assert_eq!(secrets.get("provider:2").unwrap(), None, "its key goes with it");
            assert_eq!(Providers::load(&store).await.selected, None, "its chats go back to the local model");
        });
    }

    #[test]
    fn bad_input_says_what_to_fix_and_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let secrets = SecretStore::file(dir.path());
        tauri::async_runtime::block_on(async {
            let store = Store::open(dir.path().join("confab.db")).await.unwrap();
            let mut providers = Providers::default();
            let bad_url = ProviderInput { base_url: "localhost:8000".into(), ..input(None, "A", None) };
            assert!(providers.put(bad_url, &store, &secrets).await.unwrap_err().contains("http://"));
            assert!(providers.put(input(None, " ", None), &store, &secrets).await.unwrap_err().contains("name"));
            assert!(providers.put(input(None, "A", Some("sk a")), &store, &secrets).await.unwrap_err().contains("spaces"));
            assert!(providers.put(input(Some(9), "A", None), &store, &secrets).await.unwrap_err().contains("gone"));
            let choice = Some(RemoteChoice { provider: 1, model: "m".into() });
            assert!(providers.select(choice, &store).await.is_err());
            assert_eq!(providers, Providers::default());
            assert_eq!(Providers::load(&store).await, Providers::default());
        });
    }

    #[test]
    fn refreshed_models_keep_the_users_marks_unless_the_endpoint_says() {
        let dir = tempfile::tempdir().unwrap();
        let secrets = SecretStore::file(dir.path());
        tauri::async_runtime::block_on(async {
            let store = Store::open(dir.path().join("confab.db")).await.unwrap();
            let mut providers = Providers::default();
            let id = providers.put(input(None, "P", None), &store, &secrets).await.unwrap();
            providers.set_models(id, vec![listed("a", None), listed("b", Some((true, false)))], &store).await.unwrap();
            providers.mark_inputs(id, "a", true, true, &store).await.unwrap();
            assert!(providers.mark_inputs(id, "b", false, true, &store).await.unwrap_err().contains("itself says"));
            providers.set_models(id, vec![listed("a", None), listed("b", Some((false, true))), listed("c", None)], &store).await.unwrap();
            let marks: Vec<_> =
                providers.providers[0].models.iter().map(|m| (m.id.as_str(), m.vision, m.audio, m.inputs_reported)).collect();
            assert_eq!(marks, [("a", true, true, false), ("b", false, true, true), ("c", false, false, false)]);

            providers.select(Some(RemoteChoice { provider: id, model: "c".into() }), &store).await.unwrap();
            let target = providers.target(&secrets).unwrap().unwrap();
            let image = Attachment {
                hash: confab_store::AttachmentHash::parse(&"a".repeat(64)).unwrap(),
                mime: "image/png".into(),
                size: 1,
                original_name: Some("cat.png".into()),
                width: None,
                height: None,
                duration_ms: None,
                created_at: 0,
            };
            let refusal = target.check_takes(&image).unwrap_err();
            assert!(refusal.contains("Settings › Advanced › Remote providers") && refusal.contains("cat.png"), "{refusal}");
            providers.select(Some(RemoteChoice { provider: id, model: "a".into() }), &store).await.unwrap();
            providers.target(&secrets).unwrap().unwrap().check_takes(&image).unwrap();
        });
    }
}
