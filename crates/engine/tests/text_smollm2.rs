//! The default model's tokenizer, built from its GGUF, against transformers' reading of the same
//! file (tests/reference/fixtures/smollm2_tokenizer.json, made by
//! tests/reference/make_tokenizer_fixture.py): token ids, decoding, the chat template; and
//! streaming detokenization over real merges.

use std::sync::OnceLock;

use confab_engine::{ChatMessage, ChatTemplate, StreamDecoder, Tokenizer};
use confab_paths::{AppPaths, DefaultModel};
use mlx_rs::io::GgufFile;
use serde_json::Value;

const FIXTURE: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/reference/fixtures/smollm2_tokenizer.json"));

fn fixture() -> Value {
    serde_json::from_str(FIXTURE).expect("the fixture is JSON")
}

fn tokenizer() -> &'static Tokenizer {
    static TOKENIZER: OnceLock<Tokenizer> = OnceLock::new();
    TOKENIZER.get_or_init(|| {
        let path = DefaultModel::manifest().path(&AppPaths::from_env());
        assert!(path.exists(), "{} is missing: run scripts/setup.sh", path.display());
        let gguf = GgufFile::load(&path).unwrap();
        Tokenizer::from_gguf(&gguf, &path).unwrap()
    })
}

fn ids(value: &Value) -> Vec<u32> {
    value.as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect()
}

#[test]
fn fixture_is_for_the_default_model() {
    assert_eq!(fixture()["gguf_file"], DefaultModel::manifest().file.as_str());
}

#[test]
fn encode_matches_transformers() {
    let tok = tokenizer();
    let mut wrong = Vec::new();
    for case in fixture()["texts"].as_array().unwrap() {
        let text = case["text"].as_str().unwrap();
        let got = tok.encode(text, false).unwrap();
        if got != ids(&case["ids"]) {
            wrong.push(format!("{text:?}: ours {got:?}, transformers {:?}", ids(&case["ids"])));
        }
        assert_eq!(tok.encode(text, true).unwrap(), ids(&case["ids_with_special"]), "{text:?} with special tokens");
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn decode_round_trips() {
    let tok = tokenizer();
    for case in fixture()["texts"].as_array().unwrap() {
        let text = case["text"].as_str().unwrap();
        let decoded = tok.decode(&ids(&case["ids"]), false).unwrap();
        assert_eq!(decoded, case["decoded"].as_str().unwrap());
        assert_eq!(decoded, text);
    }
}

#[test]
fn special_tokens_and_sizes_match() {
    let tok = tokenizer();
    let f = fixture();
    assert_eq!(tok.bos_id(), f["bos_id"].as_u64().map(|v| v as u32));
    assert_eq!(tok.eos_id(), f["eos_id"].as_u64().map(|v| v as u32));
    assert_eq!(tok.vocab_size() as u64, f["vocab_size"].as_u64().unwrap());
    assert!(!tok.add_bos(), "SmolLM2's GGUF says add_bos_token = false");
    for id in ids(&f["special_ids"]) {
        assert!(tok.is_special(id), "{id} is special in transformers");
    }
    assert_eq!(tok.encode("<|im_start|>", false).unwrap(), vec![1]);
    assert_eq!(tok.token_to_id("<|im_end|>"), Some(2));
    assert_eq!(tok.id_to_token(1).as_deref(), Some("<|im_start|>"));
    assert_eq!(tok.decode(&[1, 4093, 198, 6004, 2], true).unwrap(), "user\nhi");
}

#[test]
fn chat_template_renders_as_transformers() {
    let tok = tokenizer();
    let template = ChatTemplate::for_tokenizer(tok).unwrap().expect("SmolLM2's GGUF carries a chat template");
    for case in fixture()["conversations"].as_array().unwrap() {
        let messages: Vec<ChatMessage> = serde_json::from_value(case["messages"].clone()).unwrap();
        let add_generation_prompt = case["add_generation_prompt"].as_bool().unwrap();
        let rendered = template.render(&messages, add_generation_prompt, None).unwrap();
        assert_eq!(rendered, case["rendered"].as_str().unwrap());
        assert_eq!(tok.encode_prompt(&rendered).unwrap(), ids(&case["ids"]));
    }
}

/// Prompts that stress detokenization: multi-byte characters split across tokens, runs of
/// spaces, special tokens between text.
fn stream_texts() -> Vec<String> {
    let mut texts: Vec<String> = fixture()["texts"].as_array().unwrap().iter().map(|c| c["text"].as_str().unwrap().to_string()).collect();
    texts.extend(
        [
            " leading space",
            "   three leading spaces and  two inside",
            "🦀🦀🦀 crabs 🎉",
            "Ｆｕｌｌｗｉｄｔｈ ｔｅｘｔ and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕞𝕒𝕥𝕙",
            "表情符号😀测试，一二三四五六七八九十",
            "<|im_start|>assistant\n  indented answer 🦀<|im_end|>\n",
            "tail space ",
        ]
        .map(String::from),
    );
    texts
}

#[test]
fn streamed_deltas_join_to_the_full_decode() {
    let tok = tokenizer();
    for text in stream_texts() {
        let ids = tok.encode(&text, false).unwrap();
        for skip_special in [false, true] {
            let mut decoder = StreamDecoder::new(tok.clone(), skip_special);
            let mut deltas = Vec::new();
            for &id in &ids {
                deltas.push(decoder.push(id).unwrap());
            }
            deltas.push(decoder.finish().unwrap());
            let joined = deltas.concat();
            assert_eq!(joined, tok.decode(&ids, skip_special).unwrap(), "{text:?}");
            assert!(deltas.iter().all(|d| !d.contains('\u{FFFD}')), "{text:?}: {deltas:?}");
        }
    }
}

#[test]
fn tools_template_renders_as_transformers() {
    let tok = tokenizer();
    let f = fixture();
    let source = f["tools_template"].as_str().unwrap();
    let bos = tok.bos_id().and_then(|id| tok.id_to_token(id));
    let template = ChatTemplate::new(source).unwrap().with_token("bos_token", bos);
    for case in f["template_cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let messages: Vec<ChatMessage> = serde_json::from_value(case["messages"].clone()).unwrap();
        let tools = Some(case["tools"].clone()).filter(|t| !t.is_null());
        let got = template.render(&messages, case["add_generation_prompt"].as_bool().unwrap(), tools);
        match (got, case.get("error").and_then(Value::as_str)) {
            (Ok(text), None) => assert_eq!(text, case["rendered"].as_str().unwrap(), "{name}"),
            (Err(confab_engine::EngineError::Template(message)), Some(want)) => assert_eq!(message, want, "{name}"),
            (got, want) => panic!("{name}: got {got:?}, transformers gave {want:?}"),
        }
    }
}

/// What a continued chat costs before the engine: its whole history rendered by the template
/// and tokenized (the app and the server send the whole conversation, as OpenAI's API does), the
/// first time, and as the next turn, which reuses the previous prompt's ids up to the last special
/// token they share (`text::prompt_memo`). A 20-turn chat of about 4,500 tokens. Printed, never
/// asserted: `cargo test --release -p confab-engine --test text_smollm2 -- --ignored --nocapture`.
#[test]
#[ignore]
fn chat_prompt_cost() {
    let tok = tokenizer();
    let template = ChatTemplate::for_tokenizer(tok).unwrap().expect("a chat template");
    let words = "the river runs past old stone walls where children play and merchants call out prices";
    let paragraph: String = (0..12).map(|i| format!("{words} {i}. ")).collect();
    let mut history = vec![ChatMessage::system("You are a helpful assistant.")];
    for turn in 0..10 {
        history.push(ChatMessage::user(format!("Question {turn}: {paragraph}")));
        history.push(ChatMessage::assistant(format!("Answer {turn}: {paragraph}")));
    }
    let median = |mut times: Vec<f64>| {
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        times[times.len() / 2]
    };
    let (mut whole, mut next, mut count) = (vec![], vec![], 0);
    for round in 0..20 {
        // A conversation the memo has not seen (its first message differs), whole...
        let mut chat = history.clone();
        chat[0] = ChatMessage::system(format!("You are a helpful assistant ({round})."));
        let start = std::time::Instant::now();
        tok.encode_prompt(&template.render(&chat, true, None).unwrap()).unwrap();
        whole.push(start.elapsed().as_secs_f64() * 1e3);
        // ...then its next turn.
        chat.push(ChatMessage::assistant("Fine."));
        chat.push(ChatMessage::user("And then?"));
        let start = std::time::Instant::now();
        count = tok.encode_prompt(&template.render(&chat, true, None).unwrap()).unwrap().len();
        next.push(start.elapsed().as_secs_f64() * 1e3);
    }
    println!(
        "{count} tokens: render + tokenize {:.2} ms for a new conversation, {:.2} ms for its next turn (medians of 20)",
        median(whole),
        median(next)
    );
}
