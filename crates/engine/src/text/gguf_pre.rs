//! How a byte-level GGUF vocabulary splits text before BPE, by `tokenizer.ggml.pre`.
//!
//! A GGUF names its pre-tokenizer instead of storing it; llama.cpp maps the name to a list of
//! regexes applied one after another, each cutting the pieces of the one before (matches and the
//! text between them both become pieces). We keep the same names and lists. Where llama.cpp
//! rewrote a model's regex for its own regex engine, we use the model's original from its
//! `tokenizer.json`, which fancy-regex runs as written.

use crate::error::{EngineError, Result};

/// GPT-2's split, the base most byte-level vocabularies build on.
const GPT2: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)";

const LLAMA3: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

const QWEN2: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Qwen3.5's: Qwen 2's with combining marks (`\p{M}`) kept with the letters they mark.
const QWEN35: &str =
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

const GPT4O: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
);

const TEKKEN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*",
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
);

const DEEPSEEK_V3: &str = concat!(
    r"[!\x22#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+",
    r"| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
);

const BLOOM: &str = r" ?[^(\s|.,!?…。，、।۔،)]+";

/// The split for one `tokenizer.ggml.pre` value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PreSplit {
    /// Applied in order; each one cuts the pieces the previous ones made.
    pub regexes: Vec<&'static str>,
    /// A piece that is itself a token is taken whole instead of merged up (llama.cpp's
    /// `ignore_merges`, which llama-3 style vocabularies need).
    pub ignore_merges: bool,
    /// Whether prompts start with BOS when the file does not say (`add_bos_token`).
    pub add_bos_default: bool,
}

impl PreSplit {
    fn new(regexes: &[&'static str]) -> Self {
        Self { regexes: regexes.to_vec(), ignore_merges: false, add_bos_default: false }
    }

    fn llama3_style(regex: &'static str) -> Self {
        Self { regexes: vec![regex], ignore_merges: true, add_bos_default: true }
    }
}

/// The split llama.cpp uses for `pre` (the file's `tokenizer.ggml.pre`). A file without one is
/// split like GPT-2, as transformers does (llama.cpp instead warns and uses a split it calls
/// degraded). A name we do not know is an error rather than a silent wrong split.
pub(crate) fn pre_split(pre: Option<&str>) -> Result<PreSplit> {
    let split = match pre.unwrap_or("default") {
        "default" | "gpt2" | "gpt-2" | "phi-2" | "jina-es" | "jina-de" | "gigachat" | "jina-v2-es" | "jina-v2-de" | "a.x-4.0"
        | "mellum" | "modern-bert" | "exaone4" | "mpt" | "olmo" | "jais" | "jina-v1-en" | "jina-v2-code" | "roberta-bpe" => {
            PreSplit::new(&[GPT2])
        }
        // Digits one at a time, then GPT-2.
        "smollm" | "starcoder" | "refact" | "command-r" | "codeshell" | "exaone" | "minerva-7b" => PreSplit::new(&[r"\p{N}", GPT2]),
        "llama3" | "llama-v3" | "llama-bpe" | "falcon3" | "falcon-h1" | "pixtral" | "midm-2.0" | "lfm2" | "jina-v5-nano" => {
            PreSplit::llama3_style(LLAMA3)
        }
        "dbrx" | "smaug-bpe" => PreSplit::new(&[LLAMA3]),
        "glm4" | "chatglm-bpe" => PreSplit::new(&[LLAMA3]),
        "qwen2" | "deepseek-r1-qwen" | "kormo" | "f2llmv2" | "megrez" | "stablelm2" => PreSplit::new(&[QWEN2]),
        "qwen35" => PreSplit::new(&[QWEN35]),
        "gpt-4o" | "llama4" | "kanana2" | "talkie" => PreSplit::new(&[GPT4O]),
        "tekken" => PreSplit { add_bos_default: true, ..PreSplit::llama3_style(TEKKEN) },
        "falcon" => PreSplit::new(&[r"[\p{P}\$\+<=>\^~\|`]+", GPT2, "[0-9][0-9][0-9]"]),
        "deepseek-coder" => PreSplit::new(&["[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", "[一-龥ࠀ-一가-퟿]+", r"\p{N}"]),
        "deepseek-v3" => PreSplit::new(&[r"\p{N}{1,3}", "[一-龥぀-ゟ゠-ヿ]+", DEEPSEEK_V3]),
        "poro-chat" | "bloom" | "gpt3-finnish" => PreSplit::new(&[BLOOM]),
        "viking" => PreSplit::new(&[BLOOM, r"\p{N}"]),
        other => {
            return Err(EngineError::Tokenizer(format!(
                "the GGUF's pre-tokenizer `{other}` (tokenizer.ggml.pre) is not supported yet; \
                 use the model's Hugging Face folder (tokenizer.json) instead"
            )))
        }
    };
    Ok(split)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smollm_splits_digits_before_gpt2() {
        let split = pre_split(Some("smollm")).unwrap();
        assert_eq!(split.regexes, vec![r"\p{N}", GPT2]);
        assert!(!split.ignore_merges && !split.add_bos_default);
    }

    /// A combining mark stays with its letter (Qwen 2's split cuts it off as punctuation).
    #[test]
    fn qwen35_keeps_combining_marks_with_letters() {
        use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
        use tokenizers::{OffsetReferential, OffsetType, PreTokenizedString, PreTokenizer, SplitDelimiterBehavior};
        let pieces = |name: &str| {
            let regex = pre_split(Some(name)).unwrap().regexes[0];
            let split = Split::new(SplitPattern::Regex(regex.into()), SplitDelimiterBehavior::Isolated, false).unwrap();
            let mut text = PreTokenizedString::from("cafe\u{301} 12");
            split.pre_tokenize(&mut text).unwrap();
            text.get_splits(OffsetReferential::Original, OffsetType::Byte).into_iter().map(|(s, _, _)| s.to_string()).collect::<Vec<_>>()
        };
        assert_eq!(pieces("qwen35"), ["cafe\u{301}", " ", "1", "2"]);
        assert_eq!(pieces("qwen2"), ["cafe", "\u{301}", " ", "1", "2"]);
    }

    #[test]
    fn missing_pre_is_gpt2() {
        assert_eq!(pre_split(None).unwrap(), pre_split(Some("gpt-2")).unwrap());
    }

    #[test]
    fn unknown_pre_is_an_error_naming_it() {
        let err = pre_split(Some("martian")).unwrap_err().to_string();
        assert!(err.contains("`martian`") && err.contains("tokenizer.json"), "{err}");
    }

    #[test]
    fn every_regex_compiles() {
        let names = [
            "gpt2",
            "smollm",
            "llama3",
            "dbrx",
            "glm4",
            "qwen2",
            "qwen35",
            "gpt-4o",
            "tekken",
            "falcon",
            "deepseek-coder",
            "deepseek-v3",
            "bloom",
            "viking",
        ];
        for name in names {
            for regex in pre_split(Some(name)).unwrap().regexes {
                let split = tokenizers::pre_tokenizers::split::Split::new(
                    tokenizers::pre_tokenizers::split::SplitPattern::Regex(regex.into()),
                    tokenizers::SplitDelimiterBehavior::Isolated,
                    false,
                );
                assert!(split.is_ok(), "{name}: {regex}: {:?}", split.err());
            }
        }
    }
}
