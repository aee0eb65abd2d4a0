//! GGUF files of the families whose converter reshapes tensors and whose config has keys of its
//! own (Gemma 3, Qwen3.5, Qwen3.5-MoE, Qwen3-Next; Ministral 3, Gemma 4 and gpt-oss from
//! tests/reference/make_gguf_more.py, whose quantized references are mlx-lm's), written by tests/reference/make_gguf_families.py with the `gguf`
//! package the way llama.cpp's convert_hf_to_gguf.py writes them, from the tiny safetensors
//! fixtures:
//! - F32: the safetensors form's reference (transformers, float32) within the fidelity tests'
//!   1e-4 on the first-step logits, and its greedy ids exactly; the chat ids from the file's own
//!   vocabulary and template;
//! - Q8_0 and Q4_0 (kept packed): the reference the script computed from `gguf`'s own
//!   dequantization of the same blocks, within [`quantized_tolerance`], and its greedy ids exactly.
//!
//! - gpt-oss's experts in MXFP4 (kept packed, read by our own block reader: MLX's loader leaves
//!   them out): the safetensors MXFP4 fixture's reference, as the F32 files are checked, since the
//!   blocks hold the same values.
//!
//! Plus: a GGUF of an architecture we do not run is an error naming it.

mod common;

use common::{assert_matches, fixture, greedy_run, ids, json};
use confab_engine::model::LoadOptions;
use confab_engine::runtime::{Engine, EngineOptions, Prompt};
use confab_engine::text::ChatMessage;
use confab_engine::EngineError;

/// float32 on both sides; what differs is summation order.
const LOGIT_TOLERANCE: f32 = 1e-4;

/// Our dequantization computes `scale · q + bias` (MLX's affine form of llama.cpp's Q4_0 `d · (q - 8)`
/// and Q8_0 `d · q`) from the float16 scales the file holds, the same values the script's
/// float32 dequantization gives; what differs is summation order, as in float32, grown through
/// the layers of a model whose weights quantization has moved: for Q8_0 twice float32's bound
/// (measured up to 6e-5 widened; 1.03e-4 on Qwen3.5 since prompts of up to 16 tokens take the
/// fused one-row loops, which sum `scale · Σ q·x + bias · Σ x` per group, as decode steps always
/// did), for Q4_0 ten times it (measured 4e-4 on Qwen3-Next, logits up to 16; 7e-5 or less on
/// the others).
fn quantized_tolerance(quant: &str) -> f32 {
    match quant {
        "q8_0" => 2e-4,
        "q4_0" => 1e-3,
        // Q5_0 and Q5_1 (and Q3_K, Q5_K) are widened once to float16 at load: each weight rounds by
        // up to 2^-11 of itself, which the reference (float32 dequantization) does not.
        "q5_0" | "q5_1" => 1e-2,
        _ => 1e-4,
    }
}

fn check(name: &str, vocab: usize) {
    let dir = fixture(&format!("{name}_gguf"));
    let engine = Engine::start(EngineOptions::default()).unwrap();
    check_unquantized(&engine, &dir.join(format!("{name}-f32.gguf")), &json(&fixture(name).join("reference.json")), vocab);
    check_quantized(&engine, name);
}

/// The safetensors form's reference within float32's tolerance, its greedy ids exactly, and the
/// chat ids from the file's own vocabulary and template.
fn check_unquantized(engine: &Engine, path: &std::path::Path, reference: &serde_json::Value, vocab: usize) {
    let tag = path.file_name().unwrap().to_string_lossy().into_owned();
    let (model, info) = engine.load(path, LoadOptions::default(), |_| {}).unwrap();
    assert_eq!(info.vocab_size, vocab, "{tag}: vocab");
    assert_matches(&greedy_run(engine, model, reference, &tag), reference, LOGIT_TOLERANCE, &tag);
    let chat = &reference["chat"];
    let messages: Vec<ChatMessage> = serde_json::from_value(chat["messages"].clone()).unwrap();
    assert_eq!(engine.tokenize(model, Prompt::Chat(messages)).unwrap(), ids(&chat["ids"]), "{tag}: chat ids");
    engine.unload(model).unwrap();
}

/// `{name}_gguf/{name}-q8_0.gguf` and `-q4_0.gguf` against their references.
fn check_quantized(engine: &Engine, name: &str) {
    check_quantized_as(engine, name, &["q8_0", "q4_0"]);
}

/// `{name}_gguf/{name}-{quant}.gguf` against `reference-{quant}.json`, for each of `quants`.
fn check_quantized_as(engine: &Engine, name: &str, quants: &[&str]) {
    let dir = fixture(&format!("{name}_gguf"));
    for &quant in quants {
        let tag = format!("{name}-{quant}.gguf");
        let reference = json(&dir.join(format!("reference-{quant}.json")));
        let (model, info) = engine.load(dir.join(&tag), LoadOptions::default(), |_| {}).unwrap();
        assert!(info.quantized, "{tag}: the blocks stay packed");
        assert_matches(&greedy_run(engine, model, &reference, &tag), &reference, quantized_tolerance(quant), &tag);
        engine.unload(model).unwrap();
    }
}

/// Norms stored as 1 + w; the sliding-window pattern and query scale of this tiny checkpoint in
/// the keys llama.cpp defines for them.
#[test]
fn gemma3_gguf() {
    check("gemma3", 320);
}

/// ssm_a = -exp(A_log), the convolution as [C, K], value heads tiled (2 key heads, 4 value heads):
/// out_proj's columns move a head of 16 at a time, narrower than a block, so that matrix is widened.
#[test]
fn qwen3_5_gguf() {
    check("qwen3_5", 448);
}

/// As the converter writes Qwen3.5 by default: one more block (a multi-token-prediction layer,
/// with its `nextn.*` tensors) counted in block_count and named by `nextn_predict_layers`. It is
/// not run (as in transformers and mlx-lm): the model's own layers give the Q8_0 reference.
#[test]
fn qwen3_5_gguf_with_a_prediction_layer() {
    let dir = fixture("qwen3_5_gguf");
    let reference = json(&dir.join("reference-q8_0.json"));
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let tag = "qwen3_5-mtp-q8_0.gguf";
    let (model, _) = engine.load(dir.join(tag), LoadOptions::default(), |_| {}).unwrap();
    assert_matches(&greedy_run(&engine, model, &reference, tag), &reference, quantized_tolerance("q8_0"), tag);
}

/// Routed experts (4, top 2, stacked per layer) and a shared expert; 2 key and 2 value heads,
/// so nothing tiled.
#[test]
fn qwen3_5_moe_gguf() {
    check("qwen3_5_moe", 416);
}

/// `in_proj_qkvz` split into attn_qkv and attn_gate, `ssm_ba` as is, per-expert modules stacked,
/// an untied output head.
#[test]
fn qwen3_next_gguf() {
    check("qwen3_next", 480);
}

/// Ministral 3's text model as llama.cpp writes `mistral3`: Q and K rows interleaved per head,
/// YaRN with its mscale and the Llama 4 query scale in rope and attention keys. F32 against
/// transformers' Ministral3ForCausalLM (the fixture's `causal_lm`, in reference-f32.json); Q8_0
/// and Q4_0 (rows moved packed) against mlx-lm on gguf's own dequantization.
#[test]
fn ministral3_gguf() {
    let dir = fixture("ministral3_gguf");
    let engine = Engine::start(EngineOptions::default()).unwrap();
    check_unquantized(&engine, &dir.join("ministral3-f32.gguf"), &json(&dir.join("reference-f32.json")), 400);
    check_quantized(&engine, "ministral3");
}

/// Q5_0 (embeddings Q4_0, head Q8_0) and Q5_1 (embeddings Q4_1): types MLX's loader fails on, so
/// the whole file is read by our block reader (MLX reading its metadata alone); the 5-bit matrices
/// widened to float16, the 4- and 8-bit ones packed as MLX packs them.
#[test]
fn ministral3_gguf_in_types_mlx_cannot_read() {
    let engine = Engine::start(EngineOptions::default()).unwrap();
    check_quantized_as(&engine, "ministral3", &["q5_0", "q5_1"]);
}

/// Gemma 4's text model as llama.cpp writes `gemma4`: head sizes and KV heads per layer, K = V on
/// the full layers (no attn_v), shared-KV layers, per-layer embeddings, double-wide MLPs in the
/// shared layers, the full layers' proportional RoPE as `rope_freqs`; its vocabulary as the
/// converter writes Gemma 4's (tokenizer model `gemma4`). F32 against transformers (the
/// safetensors fixture's reference; the chat ids from the Gemma-4-style tokenizer.json the script
/// wrote beside the files), Q8_0 and Q4_0 against mlx-lm on gguf's own dequantization.
#[test]
fn gemma4_gguf() {
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let path = fixture("gemma4_gguf").join("gemma4-f32.gguf");
    let mut reference = json(&fixture("gemma4").join("reference.json"));
    reference["chat"] = json(&fixture("gemma4_gguf").join("tokenizer_reference.json"))["chat"].clone();
    check_unquantized(&engine, &path, &reference, 400);
    check_quantized(&engine, "gemma4");
}

/// The `gemma4` vocabulary (BPE over characters, spaces as `▁`, `<0xXX>` byte fallback, BOS
/// added): the GGUF's tokenizer gives the ids the `tokenizers` package gives on the
/// tokenizer.json it was converted from, on Unicode, runs of spaces, digits, code, special tokens
/// in text and newlines, with and without BOS, and decodes them back to the text.
#[test]
fn gemma4_gguf_vocabulary_tokenizes_as_its_tokenizer_json() {
    let path = fixture("gemma4_gguf").join("gemma4-f32.gguf");
    let gguf = mlx_rs::io::GgufFile::load(&path).unwrap();
    let tok = confab_engine::text::Tokenizer::from_gguf(&gguf, &path).unwrap();
    assert!(tok.add_bos());
    let reference = json(&fixture("gemma4_gguf").join("tokenizer_reference.json"));
    for case in reference["texts"].as_array().unwrap() {
        let text = case["text"].as_str().unwrap();
        let got = tok.encode(text, false).unwrap();
        assert_eq!(got, ids(&case["ids"]), "{text:?}");
        assert_eq!(tok.encode(text, true).unwrap(), ids(&case["ids_with_bos"]), "{text:?} with BOS");
        assert_eq!(tok.decode(&got, false).unwrap(), text, "{text:?} decoded");
    }
}

/// gpt-oss with its experts split and transposed, sinks and router renamed, YaRN in rope keys.
#[test]
fn gpt_oss_gguf() {
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let path = fixture("gpt_oss_gguf").join("gpt_oss-f32.gguf");
    check_unquantized(&engine, &path, &json(&fixture("gpt_oss").join("reference.json")), 384);
}

/// gpt-oss's experts in ggml's MXFP4 blocks, as llama.cpp's MXFP4_MOE files hold them: the same
/// values as the safetensors MXFP4 fixture, so its reference (transformers on the dequantized
/// experts) within float32's tolerance and its ids exactly.
#[test]
fn gpt_oss_gguf_with_mxfp4_experts() {
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let path = fixture("gpt_oss_gguf").join("gpt_oss_mxfp4-mxfp4.gguf");
    check_unquantized(&engine, &path, &json(&fixture("gpt_oss_mxfp4").join("reference.json")), 384);
}

/// `file`'s bytes with every `from` replaced by `to` (of the same length), in a new file.
fn renamed_copy(file: &std::path::Path, from: &[u8], to: &[u8], dir: &std::path::Path) -> std::path::PathBuf {
    let bytes = std::fs::read(file).unwrap();
    let mut renamed = bytes.clone();
    let mut i = 0;
    while i + from.len() <= renamed.len() {
        if &renamed[i..i + from.len()] == from {
            renamed[i..i + from.len()].copy_from_slice(to);
            i += from.len();
        } else {
            i += 1;
        }
    }
    assert_ne!(renamed, bytes);
    let path = dir.join(format!("{}.gguf", String::from_utf8_lossy(to)));
    std::fs::write(&path, renamed).unwrap();
    path
}

/// The same bytes under another `general.architecture` (its keys renamed alike, so only the
/// name is wrong): the error names it and what does load.
#[test]
fn gguf_of_an_architecture_we_do_not_run_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let files = [
        renamed_copy(&fixture("gemma3_gguf").join("gemma3-f32.gguf"), b"gemma3", b"falcon", dir.path()),
        // An MXFP4 file: refused by its architecture, not by its blocks.
        renamed_copy(&fixture("gpt_oss_gguf").join("gpt_oss_mxfp4-mxfp4.gguf"), b"gpt-oss", b"granite", dir.path()),
    ];
    for (path, arch) in files.iter().zip(["falcon", "granite"]) {
        let err = engine.load(path, LoadOptions::default(), |_| {}).map(|_| ()).unwrap_err();
        assert!(matches!(err, EngineError::UnknownArchitecture { .. }), "{err:?}");
        let text = err.to_string();
        for word in [arch, "gemma3", "qwen35", "mistral3", "gpt-oss"] {
            assert!(text.contains(word), "{text}");
        }
    }
}

/// A GGUF whose vocabulary type the tokenizer does not read (llama.cpp's `rwkv`, say; here the
/// fixture's `gpt2` renamed): loading names it and the types read, and the
/// picker shows the file as not supported for that reason rather than failing when picked. A
/// `gemma4` vocabulary is one we read: the picker shows that file as supported.
#[test]
fn gguf_of_a_vocabulary_type_we_do_not_read_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = renamed_copy(&fixture("ministral3_gguf").join("ministral3-f32.gguf"), b"gpt2", b"gem4", dir.path());
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let err = engine.load(&path, LoadOptions::default(), |_| {}).map(|_| ()).unwrap_err();
    assert!(matches!(err, EngineError::MissingTokenizer { .. }), "{err:?}");
    let text = err.to_string();
    for words in ["`gem4`", "supported: gpt2, llama, gemma4", "Hugging Face folder"] {
        assert!(text.contains(words), "{text}");
    }
    let summary = confab_engine::model::discover::discover(&[dir.path().to_path_buf()]).into_iter().find(|m| m.path == path).unwrap();
    assert!(!summary.supported);
    assert_eq!(summary.unsupported_reason.as_deref(), Some("Its gem4 vocabulary isn't supported yet"));

    let gemma4 = fixture("gemma4_gguf").join("gemma4-f32.gguf");
    let summary = confab_engine::model::discover::discover(&[fixture("gemma4_gguf")]).into_iter().find(|m| m.path == gemma4).unwrap();
    assert!(summary.supported, "{:?}", summary.unsupported_reason);
}
