//! A SentencePiece-style GGUF vocabulary (`tokenizer.ggml.model = llama`: scores, no merges,
//! byte fallback) against transformers' reading of the same file. The file is a tiny synthetic
//! one made by tests/reference/make_spm_fixture.py.

use confab_engine::{ChatMessage, ChatTemplate, StreamDecoder, Tokenizer};
use mlx_rs::io::GgufFile;
use serde_json::Value;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/reference/fixtures");

fn load() -> (Tokenizer, Value) {
    let path = format!("{DIR}/tiny_spm.gguf");
    let gguf = GgufFile::load(&path).unwrap();
    let tok = Tokenizer::from_gguf(&gguf, &path).unwrap();
    let fixture = std::fs::read_to_string(format!("{DIR}/tiny_spm_tokenizer.json")).unwrap();
    (tok, serde_json::from_str(&fixture).unwrap())
}

fn ids(value: &Value) -> Vec<u32> {
    value.as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect()
}

#[test]
fn matches_transformers() {
    let (tok, fixture) = load();
    assert_eq!(tok.vocab_size() as u64, fixture["vocab_size"].as_u64().unwrap());
    assert!(tok.add_bos());
    for case in fixture["texts"].as_array().unwrap() {
        let text = case["text"].as_str().unwrap();
        let want = ids(&case["ids_with_special"]);
        assert_eq!(tok.encode(text, true).unwrap(), want, "{text:?}");
        let decoded = case["decoded_skip_special"].as_str().unwrap();
        assert_eq!(tok.decode(&want, true).unwrap(), decoded, "{text:?}");

        let mut stream = StreamDecoder::new(tok.clone(), true);
        let mut joined = String::new();
        for &id in &want {
            joined.push_str(&stream.push(id).unwrap());
        }
        joined.push_str(&stream.finish().unwrap());
        assert_eq!(joined, decoded, "{text:?} streamed");
    }
}

#[test]
fn template_and_user_defined_tokens() {
    let (tok, _) = load();
    let think = tok.token_to_id("<think>").unwrap();
    assert!(!tok.is_special(think), "user-defined tokens stay in the output");
    assert!(tok.encode("a<think>b", false).unwrap().contains(&think));
    let template = ChatTemplate::for_tokenizer(&tok).unwrap().unwrap();
    let out = template.render(&[ChatMessage::user("hi")], false, None).unwrap();
    assert_eq!(out, "[user] hi");
}
