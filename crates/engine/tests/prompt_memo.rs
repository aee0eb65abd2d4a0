//! A conversation's next turn reuses the previous prompt's ids up to the last special token the
//! two share (`text::prompt_memo`). Whatever the memo reuses, a prompt must come out as the
//! tokenizer encodes it whole: for the default model's byte-level GGUF vocabulary, the
//! SentencePiece GGUF fixture and every tiny fixture's tokenizer.json, over a conversation that
//! grows, is edited in the middle, regenerated and continued, and prompts that share only part
//! of a message.

use confab_engine::{ChatMessage, ChatTemplate, Tokenizer};
use confab_paths::{AppPaths, DefaultModel};
use mlx_rs::io::GgufFile;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/reference/fixtures");

fn from_gguf(path: &std::path::Path) -> Tokenizer {
    Tokenizer::from_gguf(&GgufFile::load(path).unwrap(), path).unwrap()
}

fn tokenizers() -> Vec<(String, Tokenizer)> {
    let mut all = vec![
        ("SmolLM2 GGUF".to_string(), from_gguf(&DefaultModel::manifest().path(&AppPaths::from_env()))),
        ("tiny SentencePiece GGUF".to_string(), from_gguf(&std::path::Path::new(FIXTURES).join("tiny_spm.gguf"))),
    ];
    let mut dirs: Vec<_> = std::fs::read_dir(format!("{FIXTURES}/tiny")).unwrap().map(|e| e.unwrap().path()).collect();
    dirs.sort();
    for dir in dirs.into_iter().filter(|d| d.join("tokenizer.json").exists()) {
        all.push((dir.file_name().unwrap().to_string_lossy().into_owned(), Tokenizer::from_hf_folder(&dir).unwrap()));
    }
    all
}

/// Each prompt of a conversation's life, as a chat template renders it.
fn prompts(template: &ChatTemplate) -> Vec<String> {
    let say = |i: usize| format!("Message {i}:  some text,\nwith  spaces and ünïcode — then more words {i}.");
    let mut chat = vec![ChatMessage::system("Be brief.")];
    let mut out = vec![];
    for turn in 0..5 {
        chat.push(ChatMessage::user(say(turn)));
        out.push(template.render(&chat, true, None).unwrap());
        chat.push(ChatMessage::assistant(format!(" reply {turn}\n\nwith a paragraph")));
    }
    // An edit of an early message, a regenerate of the last turn, then the chat going on.
    let mut edited = chat.clone();
    edited[1] = ChatMessage::user("Message 0, edited");
    out.push(template.render(&edited, true, None).unwrap());
    out.push(template.render(&chat[..chat.len() - 1], true, None).unwrap());
    chat.push(ChatMessage::user("And then?"));
    out.push(template.render(&chat, true, None).unwrap());
    // A prompt cut inside a message (as a continuation renders one), and text with no template.
    let whole = template.render(&chat, false, None).unwrap();
    out.push(whole[..whole.len() - 5].to_string());
    out.push(whole.replace("And then?", "And then?<|im_end|>"));
    out
}

#[test]
fn a_prompt_encodes_the_same_whether_or_not_its_start_was_reused() {
    let generic = ChatTemplate::new(
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
    )
    .unwrap();
    for (name, tok) in tokenizers() {
        let own = ChatTemplate::for_tokenizer(&tok).ok().flatten();
        for template in own.iter().chain([&generic]) {
            for prompt in prompts(template) {
                // The memo's answer (it saw the earlier prompts), then the whole text's.
                let reused = tok.encode_prompt(&prompt).unwrap();
                let mut whole = tok.encode(&prompt, false).unwrap();
                if tok.add_bos() && tok.bos_id().is_some() && whole.first() != tok.bos_id().as_ref() {
                    whole.insert(0, tok.bos_id().unwrap());
                }
                assert_eq!(reused, whole, "{name}: {prompt:?}");
            }
        }
    }
}
