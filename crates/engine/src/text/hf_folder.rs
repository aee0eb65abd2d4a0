//! Loading a tokenizer from a Hugging Face model folder.
//!
//! `tokenizer.json` holds the whole pipeline (normalizer, pre-tokenizer, model, post-processor,
//! decoder). What it lacks, the folder's other files say: which tokens are BOS and EOS
//! (`tokenizer_config.json`, else `special_tokens_map.json`) and the chat template
//! (`chat_template.jinja`, else `tokenizer_config.json`, else `chat_template.json`).

use std::path::Path;

use serde_json::Value;

use super::tokenizer::{Specials, Tokenizer};
use crate::error::{EngineError, Result};

impl Tokenizer {
    pub fn from_hf_folder(dir: impl AsRef<Path>) -> Result<Self> {
        let dir = dir.as_ref();
        let file = dir.join("tokenizer.json");
        if !file.is_file() {
            return Err(EngineError::MissingTokenizer { path: dir.to_path_buf(), reason: "tokenizer.json is not in the folder".into() });
        }
        let damaged = |e: &dyn std::fmt::Display| {
            EngineError::Tokenizer(format!(
                "{}: {e}. The file is damaged or from a newer tokenizers version; download the model again",
                file.display()
            ))
        };
        // tokenizers panics on some malformed files (a decoder whose JSON does not parse: an
        // `expect` in its reader; found by the model_tokenizer fuzz target): a damaged file, here.
        let inner = std::panic::catch_unwind(|| tokenizers::Tokenizer::from_file(&file))
            .map_err(|_| damaged(&"tokenizers could not read it"))?
            .map_err(|e| damaged(&e))?;

        let config = read_json(&dir.join("tokenizer_config.json"))?;
        let map = read_json(&dir.join("special_tokens_map.json"))?;
        // tokenizer_config.json is the newer home of these names; special_tokens_map.json the older.
        let id_of = |name: &str| {
            [&config, &map]
                .into_iter()
                .flatten()
                .find_map(|json| token_content(json.get(name)?))
                .and_then(|content| inner.token_to_id(&content))
        };
        let specials = Specials {
            bos: id_of("bos_token"),
            eos: id_of("eos_token"),
            pad: id_of("pad_token"),
            unk: id_of("unk_token"),
            ids: Default::default(),
        };
        let add_bos = prepends_bos(&inner, specials.bos);
        let chat_template = chat_template(dir, config.as_ref())?;
        Ok(Tokenizer::assemble(inner, specials, chat_template, add_bos))
    }
}

/// The parsed file, `None` when it does not exist.
fn read_json(path: &Path) -> Result<Option<Value>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(EngineError::io(path, e)),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| EngineError::Tokenizer(format!("{}: not valid JSON ({e}); fix or replace the file", path.display())))
}

/// A special token is written either as its text or as `{"content": text, ...}`.
fn token_content(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => o.get("content")?.as_str().map(str::to_owned),
        _ => None,
    }
}

/// Whether `encode(.., add_special_tokens = true)` puts BOS first. Asking the post-processor
/// beats trusting `add_bos_token`, which older configs omit and newer ones set inconsistently.
fn prepends_bos(inner: &tokenizers::Tokenizer, bos: Option<u32>) -> bool {
    let Some(bos) = bos else { return false };
    let first = |special| inner.encode_fast("a", special).ok().and_then(|e| e.get_ids().first().copied());
    first(true) == Some(bos) && first(false) != Some(bos)
}

fn chat_template(dir: &Path, config: Option<&Value>) -> Result<Option<String>> {
    let jinja = dir.join("chat_template.jinja");
    match std::fs::read_to_string(&jinja) {
        Ok(text) => return Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(EngineError::io(jinja, e)),
    }
    if let Some(template) = config.and_then(|c| c.get("chat_template")).and_then(named_default) {
        return Ok(Some(template));
    }
    let json = read_json(&dir.join("chat_template.json"))?;
    Ok(json.as_ref().and_then(|j| j.get("chat_template")).and_then(named_default))
}

/// A template is a string, or a list of `{name, template}` of which we want `default`.
fn named_default(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Array(list) => list
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some("default"))
            .and_then(|t| t.get("template")?.as_str().map(str::to_owned)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::text::gguf_build::fixtures::tiny_byte_level;

    /// A fresh folder holding the tiny byte-level vocabulary's tokenizer.json.
    fn folder(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("confab-hf-folder-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let tok = tiny_byte_level().build(Path::new("tiny.gguf")).unwrap();
        tok.inner().save(dir.join("tokenizer.json"), false).unwrap();
        dir
    }

    #[test]
    fn reads_special_tokens_and_template_from_tokenizer_config() {
        let dir = folder("config");
        let config = serde_json::json!({
            "bos_token": "<|im_start|>",
            "eos_token": {"content": "<|im_end|>", "special": true},
            "chat_template": "{{ bos_token }}hi",
        });
        std::fs::write(dir.join("tokenizer_config.json"), config.to_string()).unwrap();
        let tok = Tokenizer::from_hf_folder(&dir).unwrap();
        assert_eq!(tok.bos_id(), tok.token_to_id("<|im_start|>"));
        assert_eq!(tok.eos_id(), tok.token_to_id("<|im_end|>"));
        assert_eq!(tok.chat_template(), Some("{{ bos_token }}hi"));
        assert!(!tok.add_bos(), "the tokenizer.json has no post-processor adding BOS");
        assert!(tok.is_special(tok.eos_id().unwrap()));
        assert_eq!(tok.encode(" the", false).unwrap(), vec![tok.token_to_id("Ġthe").unwrap()]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn chat_template_jinja_wins_and_named_lists_give_default() {
        let dir = folder("jinja");
        let config = serde_json::json!({
            "chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}],
        });
        std::fs::write(dir.join("tokenizer_config.json"), config.to_string()).unwrap();
        assert_eq!(Tokenizer::from_hf_folder(&dir).unwrap().chat_template(), Some("D"));
        std::fs::write(dir.join("chat_template.jinja"), "J").unwrap();
        assert_eq!(Tokenizer::from_hf_folder(&dir).unwrap().chat_template(), Some("J"));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn special_tokens_map_is_the_fallback() {
        let dir = folder("map");
        let map = serde_json::json!({"eos_token": "<|im_end|>"});
        std::fs::write(dir.join("special_tokens_map.json"), map.to_string()).unwrap();
        let tok = Tokenizer::from_hf_folder(&dir).unwrap();
        assert_eq!(tok.eos_id(), tok.token_to_id("<|im_end|>"));
        assert_eq!(tok.bos_id(), None);
        assert_eq!(tok.chat_template(), None);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn missing_or_broken_files_are_errors_that_say_so() {
        let dir = folder("broken");
        std::fs::write(dir.join("tokenizer_config.json"), "{ nope").unwrap();
        let err = Tokenizer::from_hf_folder(&dir).unwrap_err().to_string();
        assert!(err.contains("tokenizer_config.json") && err.contains("not valid JSON"), "{err}");

        std::fs::write(dir.join("tokenizer.json"), "{}").unwrap();
        let err = Tokenizer::from_hf_folder(&dir).unwrap_err().to_string();
        assert!(err.contains("tokenizer.json"), "{err}");

        std::fs::remove_file(dir.join("tokenizer.json")).unwrap();
        let err = Tokenizer::from_hf_folder(&dir).unwrap_err();
        assert!(matches!(err, EngineError::MissingTokenizer { .. }), "{err:?}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A tokenizer.json whose decoder section is not valid JSON made tokenizers panic (found by
    /// the model_tokenizer fuzz target); it is a damaged file.
    #[test]
    fn a_decoder_that_does_not_parse_is_a_damaged_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tokenizer.json"), "{\"decoder\": {\"type\": \"Fuse\", \"x\": \"a\u{1}b\"}}").unwrap();
        let error = Tokenizer::from_hf_folder(dir.path()).unwrap_err().to_string();
        assert!(error.contains("damaged"), "{error}");
    }
}
