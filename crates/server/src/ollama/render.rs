//! Answers in Ollama's shapes: a chat or generate reply whole and as NDJSON lines (each line a
//! JSON object; the last has `done: true` and the counts and durations, in nanoseconds), the
//! model listings (`/api/tags`, `/api/ps`, `/api/show`), and errors as `{"error": "..."}`.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::response::{IntoResponse, Response};
use confab_engine::{ModelInfo, StopReason, Timings, Usage};
use confab_turn::WholeReply;
use serde_json::{json, Map, Value};

use crate::shared::error::ApiError;
use crate::ListedModel;

/// The Ollama version whose API this server speaks: clients that gate features (tools,
/// `think`, schemas in `format`) on `/api/version` find them here.
pub const OLLAMA_API_VERSION: &str = "0.12.0";

/// An error in Ollama's shape: `{"error": "..."}` with the status.
pub struct OllamaError(pub ApiError);

impl IntoResponse for OllamaError {
    fn into_response(self) -> Response {
        self.0.answer(error_body(&self.0))
    }
}

impl From<ApiError> for OllamaError {
    fn from(error: ApiError) -> Self {
        Self(error)
    }
}

pub fn error_body(error: &ApiError) -> Value {
    json!({ "error": error.message })
}

/// Which endpoint a reply is for: chat replies carry a `message`, generate replies a `response`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    Chat,
    Generate,
}

/// One reply: every line names the model and the time it was written.
#[derive(Debug, Clone)]
pub struct Reply {
    pub endpoint: Endpoint,
    pub model: String,
    /// When the request arrived: `total_duration` counts from here.
    pub started: Instant,
    /// How long finding (and, when it was not loaded, loading) the model took.
    pub load: Duration,
}

impl Reply {
    pub fn new(endpoint: Endpoint, model: String, started: Instant, load: Duration) -> Self {
        Self { endpoint, model, started, load }
    }

    fn line(&self, done: bool) -> Map<String, Value> {
        let mut line = Map::new();
        line.insert("model".into(), Value::from(self.model.as_str()));
        line.insert("created_at".into(), Value::from(rfc3339(SystemTime::now())));
        line.insert("done".into(), Value::Bool(done));
        line
    }

    /// A line with some of the reply: text, reasoning or one call (a call comes whole).
    fn part(&self, text: &str, thinking: &str, calls: &[(String, String, Value)]) -> Value {
        let mut line = self.line(false);
        match self.endpoint {
            Endpoint::Chat => {
                line.insert("message".into(), message(text, thinking, calls));
            }
            Endpoint::Generate => {
                line.insert("response".into(), Value::from(text));
                if !thinking.is_empty() {
                    line.insert("thinking".into(), Value::from(thinking));
                }
            }
        }
        Value::Object(line)
    }

    pub fn text(&self, text: &str) -> Value {
        self.part(text, "", &[])
    }

    pub fn thinking(&self, thinking: &str) -> Value {
        self.part("", thinking, &[])
    }

    pub fn call(&self, id: &str, name: &str, arguments: &Value) -> Value {
        self.part("", "", &[(id.to_string(), name.to_string(), arguments.clone())])
    }

    /// The stream's last line: no more of the reply, the reason and the counts.
    pub fn done(&self, reason: StopReason, usage: &Usage, timings: &Timings) -> Value {
        self.whole(&WholeReply::default(), reason, usage, timings)
    }

    /// The whole reply in one object (`"stream": false`).
    pub fn whole(&self, reply: &WholeReply, reason: StopReason, usage: &Usage, timings: &Timings) -> Value {
        let Value::Object(mut line) = self.part(&reply.text, &reply.reasoning, &reply.calls) else { unreachable!("a part is an object") };
        line.insert("done".into(), Value::Bool(true));
        line.insert("done_reason".into(), Value::from(done_reason(reason)));
        for (name, value) in stats(self.started.elapsed(), self.load, usage, timings) {
            line.insert(name.into(), Value::from(value));
        }
        Value::Object(line)
    }

    /// The answer to a request with nothing to say (an empty prompt or no messages): the model
    /// is loaded (`"load"`), or was asked to unload (`"unload"`).
    pub fn loaded(&self, reason: &'static str) -> Value {
        let Value::Object(mut line) = self.part("", "", &[]) else { unreachable!("a part is an object") };
        line.insert("done".into(), Value::Bool(true));
        line.insert("done_reason".into(), Value::from(reason));
        Value::Object(line)
    }
}

/// A chat message as Ollama writes it: the text, the reasoning apart, the calls with their
/// arguments as an object.
fn message(text: &str, thinking: &str, calls: &[(String, String, Value)]) -> Value {
    let mut message = json!({ "role": "assistant", "content": text });
    if !thinking.is_empty() {
        message["thinking"] = Value::from(thinking);
    }
    if !calls.is_empty() {
        let calls: Vec<Value> = calls
            .iter()
            .enumerate()
            .map(|(index, (id, name, arguments))| json!({ "id": id, "function": { "index": index, "name": name, "arguments": arguments } }))
            .collect();
        message["tool_calls"] = Value::Array(calls);
    }
    message
}

/// Ollama's `done_reason`: the model ended its reply (or a stop string did), or a limit did.
pub fn done_reason(reason: StopReason) -> &'static str {
    match reason {
        StopReason::Eos | StopReason::StopString | StopReason::Cancelled => "stop",
        StopReason::MaxTokens | StopReason::Context => "length",
    }
}

/// The counts and durations (nanoseconds) of a finished reply: the model's loading (next to
/// nothing when it was loaded already), the prompt's time (the engine's time to the first token), and the rest
/// of the request's time, the reply's.
fn stats(total: Duration, load: Duration, usage: &Usage, timings: &Timings) -> [(&'static str, u64); 6] {
    let total = total.as_nanos() as u64;
    let load = (load.as_nanos() as u64).min(total);
    let prompt = ((timings.time_to_first_token_ms.max(0.0) * 1e6) as u64).min(total - load);
    [
        ("total_duration", total),
        ("load_duration", load),
        ("prompt_eval_count", usage.prompt as u64),
        ("prompt_eval_duration", prompt),
        ("eval_count", usage.generated as u64),
        ("eval_duration", total - load - prompt),
    ]
}

/// A time as Ollama writes it (RFC 3339, UTC, with nanoseconds).
pub fn rfc3339(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let (days, seconds) = ((since.as_secs() / 86_400) as i64, since.as_secs() % 86_400);
    // Days to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 { month_index + 3 } else { month_index - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:09}Z",
        seconds / 3600,
        seconds % 3600 / 60,
        seconds % 60,
        since.subsec_nanos()
    )
}

/// What the listings say of a model, from its loaded state where it is loaded, else from what
/// discovery read on disk.
struct Facts {
    format: String,
    family: String,
    parameters: Option<u64>,
    quantization: String,
    context_length: Option<usize>,
    capabilities: Vec<&'static str>,
}

impl Facts {
    fn of(model: &ListedModel) -> Self {
        match (&model.loaded, &model.found) {
            (Some(loaded), _) => Self::loaded(&loaded.info),
            (None, Some(found)) => Self {
                format: format!("{:?}", found.format).to_lowercase(),
                family: found.architecture.clone(),
                parameters: found.parameters,
                quantization: found.quantization.clone(),
                context_length: found.context_length,
                capabilities: if found.embedding {
                    vec!["embedding"]
                } else {
                    // Whether it thinks is its template's to say, read when it loads.
                    let mut capabilities = vec!["completion", "tools"];
                    capabilities.extend(found.vision.then_some("vision"));
                    capabilities.extend(found.audio.then_some("audio"));
                    capabilities
                },
            },
            (None, None) => Self {
                format: String::new(),
                family: String::new(),
                parameters: None,
                quantization: String::new(),
                context_length: None,
                capabilities: vec!["completion", "tools"],
            },
        }
    }

    fn loaded(info: &ModelInfo) -> Self {
        Self {
            format: format!("{:?}", info.format).to_lowercase(),
            family: info.architecture.clone(),
            parameters: Some(info.parameters),
            quantization: info.dtype.clone(),
            context_length: Some(info.context_length),
            capabilities: capabilities(info),
        }
    }

    fn details(&self) -> Value {
        json!({
            "parent_model": "",
            "format": self.format,
            "family": self.family,
            "families": [self.family],
            "parameter_size": self.parameters.map(parameter_size).unwrap_or_default(),
            "quantization_level": self.quantization,
        })
    }
}

/// A model as `/api/tags` lists it (every model a request may name, loaded or not).
pub fn tag(model: &ListedModel) -> Value {
    let size = model.found.as_ref().map_or_else(|| size_on_disk(&model.path), |f| f.size_bytes);
    json!({
        "name": model.name,
        "model": model.name,
        "modified_at": rfc3339(modified(&model.path)),
        "size": size,
        "digest": digest(model),
        "details": Facts::of(model).details(),
    })
}

/// A loaded model as `/api/ps` lists it: the memory its weights take, and when it unloads if it
/// stays idle (Ollama writes "never" as a time far ahead).
pub fn running(model: &ListedModel) -> Value {
    let facts = Facts::of(model);
    let weights = model.loaded.as_ref().map_or(0, |l| l.weights_bytes);
    let expires_at = match model.loaded.as_ref().and_then(|l| l.unloads_in) {
        Some(left) => rfc3339(SystemTime::now() + left),
        None => "2318-01-01T00:00:00.000000000Z".to_string(),
    };
    json!({
        "name": model.name,
        "model": model.name,
        "size": weights,
        "digest": digest(model),
        "details": facts.details(),
        "expires_at": expires_at,
        // Unified memory on a Mac holds the weights where the GPU reads them; on a Linux CPU
        // none are on a GPU.
        "size_vram": if cfg!(target_os = "macos") { weights } else { 0 },
        "context_length": facts.context_length,
    })
}

/// `/api/show`: what the model is and can do. Confab has no Modelfile; the one shown says where
/// the model comes from and, once loaded, its default sampling, as Ollama's would.
pub fn show(model: &ListedModel) -> Value {
    let facts = Facts::of(model);
    let parameters = model.loaded.as_ref().map(|loaded| {
        let defaults = &loaded.info.default_sampling;
        let stops: String = defaults.stop.iter().map(|s| format!("\nstop {}", Value::from(s.as_str()))).collect();
        format!(
            "temperature {}\ntop_p {}\ntop_k {}\nmin_p {}\nrepeat_penalty {}{stops}",
            defaults.temperature, defaults.top_p, defaults.top_k, defaults.min_p, defaults.repetition_penalty
        )
    });
    let family = facts.family.as_str();
    let mut model_info = json!({
        "general.architecture": family,
        "general.basename": model.name,
        "general.parameter_count": facts.parameters,
    });
    if let Some(context_length) = facts.context_length {
        model_info[format!("{family}.context_length")] = Value::from(context_length);
    }
    json!({
        "modelfile": format!("# Served by Confab\nFROM {}\n", model.path.display()),
        "parameters": parameters.unwrap_or_default(),
        "details": facts.details(),
        "model_info": model_info,
        "capabilities": facts.capabilities,
        "modified_at": rfc3339(modified(&model.path)),
    })
}

/// What Ollama's clients look for before offering a feature (images, tools, thinking).
pub fn capabilities(info: &ModelInfo) -> Vec<&'static str> {
    if info.embedding.is_some() {
        return vec!["embedding"];
    }
    // Every chat model takes tools: the turn layer writes them into the prompt where the
    // template has no place for them.
    let mut capabilities = vec!["completion", "tools"];
    if info.reply_format.reasoning.is_some() || info.thinking_switch {
        capabilities.push("thinking");
    }
    if info.vision {
        capabilities.push("vision");
    }
    if info.audio {
        capabilities.push("audio");
    }
    capabilities
}

/// A stable identity for a model's files (FNV-1a of its path and size): Ollama lists a digest,
/// and the same model must show the same one loaded or not.
fn digest(model: &ListedModel) -> String {
    let size = model.found.as_ref().map_or_else(|| size_on_disk(&model.path), |f| f.size_bytes);
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in model.path.to_string_lossy().bytes().chain(size.to_le_bytes()) {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// `135.2M`, `7.6B`, as Ollama writes sizes.
fn parameter_size(parameters: u64) -> String {
    match parameters {
        p if p >= 1_000_000_000 => format!("{:.1}B", p as f64 / 1e9),
        p if p >= 1_000_000 => format!("{:.1}M", p as f64 / 1e6),
        p => format!("{:.1}K", p as f64 / 1e3),
    }
}

/// The bytes of a model's files: a GGUF file, or a folder's files (links followed, as the
/// Hugging Face cache links its blobs).
fn size_on_disk(path: &Path) -> u64 {
    if path.is_file() {
        return std::fs::metadata(path).map_or(0, |m| m.len());
    }
    let Ok(entries) = std::fs::read_dir(path) else { return 0 };
    entries.flatten().filter_map(|entry| std::fs::metadata(entry.path()).ok()).filter(|m| m.is_file()).map(|m| m.len()).sum()
}

fn modified(path: &Path) -> SystemTime {
    std::fs::metadata(path).and_then(|m| m.modified()).unwrap_or(UNIX_EPOCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339_in_utc() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00.000000000Z");
        let leap_day = UNIX_EPOCH + Duration::new(951_782_400 + 3723, 5);
        assert_eq!(rfc3339(leap_day), "2000-02-29T01:02:03.000000005Z");
        assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(1_798_761_599)), "2026-12-31T23:59:59.000000000Z");
    }

    #[test]
    fn lines_are_ollamas() {
        let reply = Reply::new(Endpoint::Chat, "m:latest".into(), Instant::now(), Duration::ZERO);
        let text = reply.text("Hi");
        assert_eq!((text["model"].as_str(), text["done"].as_bool()), (Some("m:latest"), Some(false)));
        assert_eq!(text["message"], json!({"role": "assistant", "content": "Hi"}));
        assert_eq!(reply.thinking("hmm")["message"]["thinking"], "hmm");
        let call = reply.call("call_1", "get_weather", &json!({"city": "Paris"}));
        assert_eq!(
            call["message"]["tool_calls"][0]["function"],
            json!({"index": 0, "name": "get_weather", "arguments": {"city": "Paris"}})
        );

        let usage = Usage { prompt: 12, generated: 3, ..Usage::default() };
        let timings = Timings { time_to_first_token_ms: 0.5, ..Timings::default() };
        let done = reply.done(StopReason::MaxTokens, &usage, &timings);
        assert_eq!((done["done"].as_bool(), done["done_reason"].as_str()), (Some(true), Some("length")));
        assert_eq!((done["prompt_eval_count"].as_u64(), done["eval_count"].as_u64()), (Some(12), Some(3)));
        let total = done["total_duration"].as_u64().unwrap();
        let parts = ["load_duration", "prompt_eval_duration", "eval_duration"].map(|name| done[name].as_u64().unwrap());
        assert_eq!(parts.iter().sum::<u64>(), total);
        assert!(done["created_at"].as_str().unwrap().ends_with('Z'));

        let generate = Reply::new(Endpoint::Generate, "m".into(), Instant::now(), Duration::ZERO);
        let whole = WholeReply { reasoning: "r".into(), text: "t".into(), calls: vec![] };
        let body = generate.whole(&whole, StopReason::Eos, &usage, &timings);
        assert_eq!(
            (body["response"].as_str(), body["thinking"].as_str(), body["done_reason"].as_str()),
            (Some("t"), Some("r"), Some("stop"))
        );
        assert!(body.get("message").is_none());
        let loaded = generate.loaded("load");
        assert_eq!((loaded["response"].as_str(), loaded["done_reason"].as_str()), (Some(""), Some("load")));
    }

    #[test]
    fn errors_are_one_field() {
        let error = ApiError::invalid(Some("format"), "bad format");
        assert_eq!(error_body(&error), json!({"error": "bad format"}));
    }

    #[test]
    fn sizes_read_as_ollamas() {
        assert_eq!(parameter_size(135_000_000), "135.0M");
        assert_eq!(parameter_size(7_615_616_512), "7.6B");
    }
}
