//! The user's settings: one JSON value in the store, checked before it is saved.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use confab_engine::defaults;
use confab_engine::KvQuantization;
use confab_engine::LoadOptions;
use confab_engine::{MemoryBudget, ModelId, PromptLookup, Speculative, DEFAULT_MAX_DRAFT};
use confab_engine::{SamplingChoices, SamplingParams};
use confab_secrets::SecretStore;
use confab_store::Store;

/// The store's key for the whole settings object.
const KEY: &str = "app";
/// The secret store's name for the local server's key (kept out of the SQLite file).
const SERVER_KEY_SECRET: &str = "local-server";

/// A value kept under `key` in the store's settings apart from `Settings` (the provider list,
/// the tool servers); an unreadable one is the default, and the log says so, naming `what`.
pub async fn load_value<T: serde::de::DeserializeOwned + Default>(store: &Store, key: &str, what: &str) -> T {
    match store.setting_as::<T>(key).await {
        Ok(found) => found.unwrap_or_default(),
        Err(e) => {
            tracing::warn!("the saved {what} was unreadable ({e}); starting with none");
            T::default()
        }
    }
}

/// Saves a value `load_value` reads.
pub async fn save_value<T: serde::Serialize>(store: &Store, key: &str, value: &T) -> Result<(), String> {
    let value = serde_json::to_value(value).map_err(|e| e.to_string())?;
    store.set_setting(key, &value).await.map_err(|e| e.to_string())
}

/// Missing fields (older files) take their defaults.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, ts_rs::TS)]
#[serde(default)]
pub struct Settings {
    pub system_prompt: String,
    /// The sampling settings chosen over the model's own defaults (its generation_config.json,
    /// or the chat defaults for a model without one); `None`: the model's.
    pub temperature: Option<f32>,
    pub top_p: Option<f32>,
    pub top_k: Option<i32>,
    pub min_p: Option<f32>,
    pub repetition_penalty: Option<f32>,
    pub max_tokens: u32,
    /// `None`: a new seed for each reply.
    pub seed: Option<u64>,
    /// Extra folders searched for models.
    pub model_folders: Vec<PathBuf>,
    /// Prefix (KV) cache budgets in MiB; they apply from the next launch.
    pub kv_cache_memory_mb: u64,
    pub kv_cache_disk_mb: u64,
    /// The share of the memory left beside the loaded models, in percent, that running replies
    /// may come to hold together; a reply that would need more waits its turn, and one that
    /// could never fit is refused with what to change. From the next launch.
    pub reply_memory_percent: u32,
    pub theme: Theme,
    /// The model loaded at startup; `None`: the default model.
    pub model_path: Option<PathBuf>,
    /// The local OpenAI-compatible server (loopback only): off unless turned on.
    pub server_enabled: bool,
    pub server_port: u16,
    /// Clients must send `Authorization: Bearer <key>`; empty: no key asked. Travels to the
    /// settings pane with the rest, but is saved in the secret store, never in SQLite.
    pub server_key: String,
    /// Web pages (origins such as `https://chat.example.com`; `*` matches any run) allowed to
    /// call the server from a browser, besides pages on localhost; any other page is refused.
    pub server_origins: Vec<String>,
    /// For models whose template reads `reasoning_effort` (gpt-oss); `None`: the template's own
    /// default.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// With tools on: whether the model decides to call one, or each local reply must call a
    /// tool (held by the model's call grammar, as the server's `tool_choice: "required"`).
    pub tool_use: ToolUse,
    /// Rounds of tool calls one reply may make before it is stopped with a note.
    pub tool_rounds: u32,
    /// How long a tool call may run before it is given up.
    pub tool_timeout_s: u32,
    /// Per model (by its path), the bits its keys and values are quantized to (4 or 8, group
    /// 64, as mlx-lm's `--kv-bits`); a model not listed keeps them in full precision.
    #[ts(type = "Record<string, number>")]
    pub model_kv_bits: BTreeMap<PathBuf, u8>,
    /// The embedding model that searches documents too large for the context (Settings › Model ›
    /// Embedding model); `None`: the first one found in the model folders (`embedder::choose`).
    pub embedding_model: Option<PathBuf>,
    /// Speculative decoding for local replies: cheap proposals the model checks several at a
    /// time (the same replies, sooner where proposals are kept; the plan says when a reply
    /// cannot use it).
    pub speculative: SpeculativeChoice,
    /// Per model (by its path), the smaller model sharing its vocabulary that proposes its
    /// tokens when `speculative` is `DraftModel`; loaded beside it.
    #[ts(type = "Record<string, string>")]
    pub model_drafts: BTreeMap<PathBuf, PathBuf>,
}

/// Where local replies take speculative proposals from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum SpeculativeChoice {
    /// Plain decoding.
    #[default]
    Off,
    /// What followed earlier occurrences of the last few tokens (no second model).
    PromptLookup,
    /// The model's draft model (`Settings::model_drafts`).
    DraftModel,
}

/// Whether a reply with tools on may answer in text or must call a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ToolUse {
    /// The model decides.
    #[default]
    Auto,
    /// Each reply calls a tool (the reply after the results answers in text).
    Required,
}

/// A reply that calls tools this many rounds in a row is stopped: a looping model ends.
pub const DEFAULT_TOOL_ROUNDS: u32 = 8;
pub const MAX_TOOL_ROUNDS: u32 = 100;
/// Long enough for a search or a build step; a hung tool is given up after it.
pub const DEFAULT_TOOL_TIMEOUT_S: u32 = 60;
pub const MAX_TOOL_TIMEOUT_S: u32 = 3600;
/// Below this, hardly a reply of the default model would fit beside a large model.
pub const MIN_REPLY_MEMORY_PERCENT: u32 = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum Theme {
    System,
    Light,
    Dark,
}

/// How hard a reasoning model thinks, as its template takes it (`reasoning_effort`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffort {
    Low,
    Medium,
    High,
}

impl ReasoningEffort {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }
}

/// A named set of sampling settings the pane offers; Model's own (every field `None`, the
/// default) leaves them to the model, Balanced is the chat defaults.
#[derive(Debug, Clone, PartialEq, serde::Serialize, ts_rs::TS)]
pub struct SamplingPreset {
    pub name: String,
    pub hint: String,
    pub temperature: Option<f32>,
    pub top_p: Option<f32>,
    pub top_k: Option<i32>,
    pub min_p: Option<f32>,
    pub repetition_penalty: Option<f32>,
}

/// Model's own, then Precise, Balanced, Creative: from the likeliest words to the most varied.
pub fn sampling_presets() -> Vec<SamplingPreset> {
    let chat = SamplingParams::chat();
    let preset = |name: &str, hint: &str, temperature, top_p, top_k, min_p, repetition_penalty| SamplingPreset {
        name: name.into(),
        hint: hint.into(),
        temperature: Some(temperature),
        top_p: Some(top_p),
        top_k: Some(top_k),
        min_p: Some(min_p),
        repetition_penalty: Some(repetition_penalty),
    };
    vec![
        SamplingPreset {
            name: "Model's own".into(),
            hint: "The defaults: what the model ships with (Balanced for a model that ships none).".into(),
            temperature: None,
            top_p: None,
            top_k: None,
            min_p: None,
            repetition_penalty: None,
        },
        preset("Precise", "Facts, code and steps: nearly always the likeliest word.", 0.1, 0.8, 20, 0.1, chat.repetition_penalty),
        preset("Balanced", "Steady, with some variety.", chat.temperature, chat.top_p, chat.top_k, chat.min_p, chat.repetition_penalty),
        preset("Creative", "Stories and ideas: more varied wording.", 0.9, 0.95, 100, 0.02, 1.05),
    ]
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            system_prompt: String::new(),
            temperature: None,
            top_p: None,
            top_k: None,
            min_p: None,
            repetition_penalty: None,
            max_tokens: defaults::REPLY_TOKENS,
            seed: None,
            model_folders: Vec::new(),
            kv_cache_memory_mb: defaults::PREFIX_CACHE_MEMORY_MIB as u64,
            kv_cache_disk_mb: defaults::PREFIX_CACHE_DISK_MIB,
            reply_memory_percent: (defaults::MEMORY_BUDGET_SHARE * 100.0).round() as u32,
            theme: Theme::System,
            model_path: None,
            server_enabled: false,
            server_port: confab_server::DEFAULT_PORT,
            server_key: String::new(),
            server_origins: Vec::new(),
            reasoning_effort: None,
            tool_use: ToolUse::Auto,
            tool_rounds: DEFAULT_TOOL_ROUNDS,
            tool_timeout_s: DEFAULT_TOOL_TIMEOUT_S,
            model_kv_bits: BTreeMap::new(),
            embedding_model: None,
            speculative: SpeculativeChoice::Off,
            model_drafts: BTreeMap::new(),
        }
    }
}

impl Settings {
    /// Reads the saved settings; unreadable ones fall back to the defaults (and say so). The
    /// server's key comes from the secret store; one that an older version left in SQLite moves
    /// there now.
    pub async fn load(store: &Store, secrets: &SecretStore) -> Settings {
        let mut settings = match store.setting_as::<Settings>(KEY).await {
            Ok(Some(settings)) if settings.validate().is_ok() => settings,
            Ok(None) => Settings::default(),
            Ok(Some(_)) | Err(_) => {
                tracing::warn!("the saved settings were unreadable; using the defaults");
                Settings::default()
            }
        };
        if !settings.server_key.is_empty() {
            if let Err(e) = settings.save(store, secrets).await {
                tracing::warn!("could not move the local server's key out of the database: {e}");
            }
            return settings;
        }
        match secrets.get(SERVER_KEY_SECRET) {
            Ok(key) => settings.server_key = key.unwrap_or_default(),
            Err(e) => {
                // Without its key the server would take any client: it stays off instead.
                tracing::warn!("{e} The local server stays off until the key can be read.");
                settings.server_enabled = false;
            }
        }
        settings
    }

    /// Checks, then saves: the key to the secret store, everything else to SQLite.
    pub async fn save(&self, store: &Store, secrets: &SecretStore) -> Result<(), String> {
        self.validate()?;
        let saved =
            if self.server_key.is_empty() { secrets.delete(SERVER_KEY_SECRET) } else { secrets.set(SERVER_KEY_SECRET, &self.server_key) };
        saved.map_err(|e| e.to_string())?;
        let without_key = Settings { server_key: String::new(), ..self.clone() };
        let value = serde_json::to_value(&without_key).map_err(|e| e.to_string())?;
        store.set_setting(KEY, &value).await.map_err(|e| e.to_string())
    }

    /// A message naming the field and the allowed range, for the settings pane.
    pub fn validate(&self) -> Result<(), String> {
        // Any valid defaults will do: what is checked is what the person chose.
        confab_turn::sampling_params(&SamplingParams::chat(), &self.sampling_choices()).map_err(|e| e.to_string())?;
        if self.max_tokens == 0 || self.max_tokens > defaults::MAX_REPLY_TOKENS {
            return Err(format!("Max tokens must be between 1 and {}.", defaults::MAX_REPLY_TOKENS));
        }
        if self.kv_cache_memory_mb > 1 << 20 || self.kv_cache_disk_mb > 1 << 24 {
            return Err("The cache budgets are too large; give them in MiB (e.g. 2048).".into());
        }
        if !(MIN_REPLY_MEMORY_PERCENT..=100).contains(&self.reply_memory_percent) {
            return Err(format!("Memory for replies must be between {MIN_REPLY_MEMORY_PERCENT} and 100 percent."));
        }
        if self.server_port < 1024 {
            return Err(format!("The server's port must be between 1024 and 65535 (it is {}).", self.server_port));
        }
        if self.server_key.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err("The server's key cannot contain spaces; use letters, digits and punctuation.".into());
        }
        if let Some(origin) = self.server_origins.iter().find(|o| !confab_server::is_origin_pattern(o)) {
            return Err(format!(
                "\"{origin}\" is not a web page origin; write it as scheme://host or scheme://host:port (https://chat.example.com), with * for any part."
            ));
        }
        if !(1..=MAX_TOOL_ROUNDS).contains(&self.tool_rounds) {
            return Err(format!("Tool rounds per reply must be between 1 and {MAX_TOOL_ROUNDS}."));
        }
        if !(1..=MAX_TOOL_TIMEOUT_S).contains(&self.tool_timeout_s) {
            return Err(format!("The tool timeout must be between 1 and {MAX_TOOL_TIMEOUT_S} seconds."));
        }
        if let Some(folder) = self.model_folders.iter().find(|f| !f.is_absolute()) {
            return Err(format!("Model folder \"{}\" must be a full path, such as /Users/me/models.", folder.display()));
        }
        if let Some(model) = self.embedding_model.as_ref().filter(|m| !m.is_absolute()) {
            return Err(format!("The embedding model \"{}\" must be a full path; pick one in Settings › Model.", model.display()));
        }
        if let Some((model, bits)) = self.model_kv_bits.iter().find(|(_, bits)| ![4, 8].contains(*bits)) {
            return Err(format!(
                "Keys and values are kept at 8 or 4 bits, or in full precision; {bits} bits was asked for {}.",
                model.display()
            ));
        }
        if let Some((model, draft)) = self.model_drafts.iter().find(|(model, draft)| !model.is_absolute() || !draft.is_absolute()) {
            return Err(format!(
                "The draft model \"{}\" for {} must be a full path; pick one in Settings › Model.",
                draft.display(),
                model.display()
            ));
        }
        Ok(())
    }

    /// The draft model to load beside the model at `path`, and how: where speculative decoding
    /// takes a draft model's proposals and one is chosen for it.
    pub fn draft_for(&self, path: &Path) -> Option<(PathBuf, LoadOptions)> {
        let draft = self.model_drafts.get(path).filter(|_| self.speculative == SpeculativeChoice::DraftModel)?;
        Some((draft.clone(), self.load_options(draft)))
    }

    /// The speculative decoding a local reply asks for; `draft`: the draft model loaded beside
    /// the model (a reply with the draft-model choice and none loaded decodes plainly).
    pub fn speculative(&self, draft: Option<ModelId>) -> Option<Speculative> {
        match self.speculative {
            SpeculativeChoice::Off => None,
            SpeculativeChoice::PromptLookup => Some(Speculative::PromptLookup(PromptLookup::default())),
            SpeculativeChoice::DraftModel => draft.map(|model| Speculative::DraftModel { model, max_draft: DEFAULT_MAX_DRAFT }),
        }
    }

    /// What running replies may hold together (`reply_memory_percent`).
    pub fn memory_budget(&self) -> MemoryBudget {
        MemoryBudget::Share(self.reply_memory_percent as f64 / 100.0)
    }

    /// How to load the model at `path`: its keys/values precision from `model_kv_bits`.
    pub fn load_options(&self, path: &Path) -> LoadOptions {
        let kv_quantization =
            self.model_kv_bits.get(path).and_then(|bits| KvQuantization::new(*bits, KvQuantization::DEFAULT_GROUP_SIZE).ok());
        LoadOptions { kv_quantization, ..LoadOptions::default() }
    }

    /// The sampling a local reply runs with: the model's defaults with these settings over
    /// them (`SamplingParams::with_choices`, the rule the CLI and the server use too), the
    /// model's stop strings kept.
    pub fn sampling(&self, model_defaults: &SamplingParams) -> SamplingParams {
        model_defaults.with_choices(&self.sampling_choices())
    }

    /// What these settings choose over a model's sampling defaults.
    fn sampling_choices(&self) -> SamplingChoices {
        SamplingChoices {
            temperature: self.temperature,
            top_k: self.top_k,
            top_p: self.top_p,
            min_p: self.min_p,
            repetition_penalty: self.repetition_penalty,
            seed: self.seed,
            max_tokens: Some(self.max_tokens),
            ..SamplingChoices::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        Settings::default().validate().expect("defaults validate");
    }

    #[test]
    fn memory_for_replies_is_a_share_of_what_the_model_leaves() {
        let default = Settings::default();
        assert_eq!(default.memory_budget(), MemoryBudget::default(), "the engine's default, from one constant");
        for percent in [0, MIN_REPLY_MEMORY_PERCENT - 1, 101] {
            let error = Settings { reply_memory_percent: percent, ..default.clone() }.validate().unwrap_err();
            assert!(error.contains("Memory for replies must be between 5 and 100 percent"), "{error}");
        }
        let chosen = Settings { reply_memory_percent: 80, ..default };
        chosen.validate().unwrap();
        assert_eq!(chosen.memory_budget(), MemoryBudget::Share(0.8));
    }

    /// tests/sampling: the request the CLI and the server send too, over the model's own defaults.
    #[test]
    fn the_same_request_samples_alike() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/sampling");
        let read =
            |name: &str| -> serde_json::Value { serde_json::from_str(&std::fs::read_to_string(folder.join(name)).unwrap()).unwrap() };
        let defaults = SamplingParams::model_defaults(Some(&read("generation_config.json"))).unwrap();
        let expected: SamplingParams = serde_json::from_value(read("expected.json")).unwrap();
        let settings = Settings { temperature: Some(0.2), top_p: Some(0.5), max_tokens: 64, seed: Some(9), ..Settings::default() };
        assert_eq!(settings.sampling(&defaults), expected);
        // Untouched settings: the model's own sampling, not the app's.
        let untouched = Settings { max_tokens: 64, ..Settings::default() };
        assert_eq!(untouched.sampling(&defaults), SamplingParams { max_tokens: 64, ..defaults.clone() });
        // A model without a generation_config.json: the chat defaults, as before.
        assert_eq!(Settings::default().sampling(&SamplingParams::model_defaults(None).unwrap()), SamplingParams::chat());
    }

    #[test]
    fn presets_are_valid_and_the_models_own_is_the_default() {
        let presets = sampling_presets();
        let names: Vec<&str> = presets.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["Model's own", "Precise", "Balanced", "Creative"]);
        for p in &presets {
            let settings = Settings {
                temperature: p.temperature,
                top_p: p.top_p,
                top_k: p.top_k,
                min_p: p.min_p,
                repetition_penalty: p.repetition_penalty,
                ..Settings::default()
            };
            settings.validate().unwrap_or_else(|e| panic!("{}: {e}", p.name));
            if p.name == "Model's own" {
                assert_eq!(settings, Settings::default());
            }
            if p.name == "Balanced" {
                assert_eq!(settings.sampling(&SamplingParams::default()), SamplingParams::chat());
            }
        }
        assert!(presets[1].temperature < presets[2].temperature && presets[2].temperature < presets[3].temperature);
    }

    #[test]
    fn bad_values_name_the_field() {
        let hot = Settings { temperature: Some(-1.0), ..Settings::default() };
        assert!(hot.validate().unwrap_err().to_lowercase().contains("temperature"));
        let long = Settings { max_tokens: 0, ..Settings::default() };
        assert!(long.validate().unwrap_err().contains("Max tokens"), "the pane's name for it");
        let low = Settings { server_port: 80, ..Settings::default() };
        assert!(low.validate().unwrap_err().contains("port"));
        let spaced = Settings { server_key: "a b".into(), ..Settings::default() };
        assert!(spaced.validate().unwrap_err().contains("key"));
        let origin = Settings { server_origins: vec!["chat.example.com".into()], ..Settings::default() };
        assert!(origin.validate().unwrap_err().contains("not a web page origin"));
        let rounds = Settings { tool_rounds: 0, ..Settings::default() };
        assert!(rounds.validate().unwrap_err().contains("Tool rounds"));
        let timeout = Settings { tool_timeout_s: 0, ..Settings::default() };
        assert!(timeout.validate().unwrap_err().contains("timeout"));
        let relative = Settings { model_folders: vec!["models".into()], ..Settings::default() };
        assert!(relative.validate().unwrap_err().contains("full path"));
    }

    #[test]
    fn each_model_keeps_its_own_keys_and_values_precision() {
        let mut settings = Settings::default();
        settings.model_kv_bits.insert("/models/a".into(), 8);
        settings.model_kv_bits.insert("/models/b".into(), 4);
        settings.validate().expect("8 and 4 bits are offered");
        let bits = |path: &str| settings.load_options(Path::new(path)).kv_quantization;
        assert_eq!(bits("/models/a"), Some(KvQuantization::new(8, 64).unwrap()));
        assert_eq!(bits("/models/b"), Some(KvQuantization::new(4, 64).unwrap()));
        assert_eq!(bits("/models/c"), None, "a model not listed keeps full precision");
        // The JSON the window sends: paths as keys.
        let json = serde_json::to_value(&settings).unwrap();
        assert_eq!(json["model_kv_bits"], serde_json::json!({"/models/a": 8, "/models/b": 4}));
        settings.model_kv_bits.insert("/models/c".into(), 3);
        let refused = settings.validate().unwrap_err();
        assert!(refused.contains("8 or 4 bits") && refused.contains("/models/c"), "{refused}");
    }

    #[test]
    fn speculative_decoding_is_off_until_chosen_and_a_draft_belongs_to_its_model() {
        let mut settings = Settings::default();
        assert_eq!(settings.speculative(Some(ModelId(2))), None, "off by default");
        settings.model_drafts.insert("/models/big".into(), "/models/small".into());
        assert!(settings.draft_for(Path::new("/models/big")).is_none(), "no draft is loaded while the choice is not the draft model");
        settings.speculative = SpeculativeChoice::PromptLookup;
        assert_eq!(settings.speculative(None), Some(Speculative::PromptLookup(PromptLookup::default())));
        settings.speculative = SpeculativeChoice::DraftModel;
        assert_eq!(settings.draft_for(Path::new("/models/big")).map(|(path, _)| path), Some("/models/small".into()));
        assert!(settings.draft_for(Path::new("/models/other")).is_none());
        let drafted = settings.speculative(Some(ModelId(2)));
        assert_eq!(drafted, Some(Speculative::DraftModel { model: ModelId(2), max_draft: DEFAULT_MAX_DRAFT }));
        assert_eq!(settings.speculative(None), None, "no draft loaded: plain decoding");
        settings.validate().expect("full paths");
        let json = serde_json::to_value(&settings).unwrap();
        assert_eq!(json["speculative"], "draft_model");
        assert_eq!(json["model_drafts"], serde_json::json!({"/models/big": "/models/small"}));
        settings.model_drafts.insert("/models/c".into(), "small".into());
        assert!(settings.validate().unwrap_err().contains("full path"));
    }

    #[test]
    fn old_files_fill_missing_fields() {
        let partial: Settings = serde_json::from_str(r#"{"temperature":0.9,"theme":"dark"}"#).unwrap();
        assert_eq!(partial.temperature, Some(0.9));
        assert_eq!(partial.top_p, None, "what an older file leaves out is the model's");
        assert_eq!(partial.theme, Theme::Dark);
        assert_eq!(partial.max_tokens, Settings::default().max_tokens);
    }

    #[test]
    fn saved_settings_round_trip_through_sqlite() {
        let dir = tempfile::tempdir().unwrap();
        let secrets = SecretStore::file(dir.path());
        tauri::async_runtime::block_on(async {
            let store = Store::open(dir.path().join("confab.db")).await.unwrap();
            let mine = Settings { system_prompt: "Be brief.".into(), seed: Some(7), ..Settings::default() };
            mine.save(&store, &secrets).await.unwrap();
            assert_eq!(Settings::load(&store, &secrets).await, mine);
            let bad = Settings { top_p: Some(2.0), ..Settings::default() };
            assert!(bad.save(&store, &secrets).await.is_err());
            assert_eq!(Settings::load(&store, &secrets).await, mine, "a rejected save changes nothing");
        });
    }

    /// Every byte SQLite wrote for this database: the file and its write-ahead log.
    fn database_bytes(dir: &std::path::Path) -> Vec<u8> {
        ["confab.db", "confab.db-wal"].iter().filter_map(|f| std::fs::read(dir.join(f)).ok()).flatten().collect()
    }

    fn contains(haystack: &[u8], needle: &str) -> bool {
        haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
    }

    #[test]
    fn the_server_key_lives_in_the_secret_store_not_in_sqlite() {
        let dir = tempfile::tempdir().unwrap();
        let secrets = SecretStore::file(dir.path());
        let key = "srv-key-7f3a9c";
        tauri::async_runtime::block_on(async {
            let store = Store::open(dir.path().join("confab.db")).await.unwrap();
            let mine = Settings { server_enabled: true, server_key: key.into(), ..Settings::default() };
            mine.save(&store, &secrets).await.unwrap();
            assert_eq!(Settings::load(&store, &secrets).await, mine);
            assert!(!contains(&database_bytes(dir.path()), key), "the key is nowhere in the database file or its log");
            assert_eq!(secrets.get(SERVER_KEY_SECRET).unwrap().as_deref(), Some(key));

            // What an older version saved: the key inside the settings JSON. It moves out.
            store.set_setting(KEY, &serde_json::to_value(&mine).unwrap()).await.unwrap();
            secrets.delete(SERVER_KEY_SECRET).unwrap();
            let loaded = Settings::load(&store, &secrets).await;
            assert_eq!(loaded, mine, "still the server's key");
            assert_eq!(secrets.get(SERVER_KEY_SECRET).unwrap().as_deref(), Some(key));
            let row: Settings = store.setting_as(KEY).await.unwrap().unwrap();
            assert_eq!(row.server_key, "", "moved out of the settings row");

            Settings { server_key: String::new(), ..loaded }.save(&store, &secrets).await.unwrap();
            assert_eq!(secrets.get(SERVER_KEY_SECRET).unwrap(), None, "an emptied key is deleted");
        });
    }
}
