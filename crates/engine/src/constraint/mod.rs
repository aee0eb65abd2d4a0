//! Constrained decoding: a reply that must match a JSON Schema, a regular expression or a Lark
//! grammar, enforced token by token with llguidance.
//!
//! - [`Constraint`] is what a request asks for (`Request::constraint`).
//! - [`Grammars`] is built once per loaded model (lazily, by the first request with a
//!   constraint): the vocabulary's trie and llguidance's parser factory over it.
//! - [`Guide`] is one row's matcher: the tokens allowed next ([`TokenMask`]), the tokens the
//!   grammar forces (fed without sampling: grammar jump), and whether the grammar is done.
//!
//! The decode step (runtime/generate/step.rs) computes each row's next mask on a worker thread while
//! MLX runs the forward pass, and the sampler applies it before temperature, top-k and top-p.

mod vocab;

pub(crate) use vocab::special_ids;

use std::fmt;
use std::sync::Arc;

use llguidance::api::{ParserLimits, TopLevelGrammar};
use llguidance::{Matcher, ParserFactory};
use toktrie::SimpleVob;

use crate::error::{EngineError, Result};
use crate::text::Tokenizer;

/// What a reply must match.
#[derive(Debug, Clone, PartialEq)]
pub enum Constraint {
    /// A JSON Schema (draft 2020-12 and earlier; local `$ref`s). The reply is compact JSON (no
    /// whitespace between tokens) unless the schema's `x-guidance` options say otherwise.
    JsonSchema(serde_json::Value),
    /// Any JSON object.
    JsonObject,
    /// A regular expression (Rust `regex` syntax) the whole reply matches.
    Regex(String),
    /// A grammar in llguidance's Lark dialect (which can embed JSON Schemas with `%json { .. }`
    /// and regular expressions), for tool calls and other formats.
    Lark(String),
}

impl Constraint {
    /// Its kind, for plans and logs: `json_schema`, `json_object`, `regex` or `lark`.
    pub fn kind(&self) -> &'static str {
        match self {
            Constraint::JsonSchema(_) => "json_schema",
            Constraint::JsonObject => "json_object",
            Constraint::Regex(_) => "regex",
            Constraint::Lark(_) => "lark",
        }
    }

    fn grammar(&self) -> TopLevelGrammar {
        match self {
            Constraint::JsonSchema(schema) => TopLevelGrammar::from_json_schema(compact(schema.clone())),
            Constraint::JsonObject => TopLevelGrammar::from_json_schema(compact(serde_json::json!({ "type": "object" }))),
            Constraint::Regex(regex) => TopLevelGrammar::from_regex(regex),
            Constraint::Lark(lark) => TopLevelGrammar::from_lark(lark.clone()),
        }
    }
}

/// JSON without optional whitespace, unless the schema chose its own layout: a small model
/// offered whitespace can spend its whole budget on newlines, and every structural token
/// becomes forced, so grammar jump feeds more of the reply without sampling.
fn compact(mut schema: serde_json::Value) -> serde_json::Value {
    if let Some(object) = schema.as_object_mut() {
        object.entry("x-guidance").or_insert_with(|| serde_json::json!({ "whitespace_flexible": false }));
    }
    schema
}

/// What one grammar may cost, a request's schema or grammar being a stranger's: llguidance's
/// own defaults (sized on large real schemas, FHIR's among them: the work of compiling one stays
/// within tens of milliseconds, a mask within a few), named here so that they are set on
/// purpose, not by omission.
fn grammar_limits() -> ParserLimits {
    ParserLimits {
        // Earley items in one row: the grammar's branching.
        max_items_in_row: 2_000,
        // Building the lexer's regular expressions (about 50 000 a millisecond).
        initial_lexer_fuel: 1_000_000,
        // The lexer's work for one mask (about 14 000 a millisecond).
        step_lexer_fuel: 200_000,
        // Earley items made for one mask (about 20 000 a millisecond).
        step_max_items: 50_000,
        // Lexer states, 1-2 kB each.
        max_lexer_states: 250_000,
        // Symbols in the grammar's productions (a few megabytes of schema).
        max_grammar_size: 500_000,
        precompute_large_lexemes: true,
        // The grammar and parser state in errors (`invalid` shows their first line).
        verbose_errors: true,
    }
}

/// One model's vocabulary as grammars see it, shared by every request with a constraint.
pub struct Grammars {
    factory: Arc<ParserFactory>,
    /// Entries in a mask: the model's logits.
    vocab_size: usize,
}

impl fmt::Debug for Grammars {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Grammars").field("vocab_size", &self.vocab_size).finish_non_exhaustive()
    }
}

impl Grammars {
    /// Builds the token trie for `tokenizer` over the model's `vocab_size` logits; `eos_ids`
    /// are every id that ends a reply.
    pub fn new(tokenizer: &Tokenizer, vocab_size: usize, eos_ids: &[u32]) -> Result<Self> {
        let began = std::time::Instant::now();
        let env = vocab::token_env(tokenizer, vocab_size, eos_ids)?;
        let mut factory = ParserFactory::new_simple(&env)
            .map_err(|e| EngineError::Internal(format!("llguidance could not index the vocabulary: {e}")))?;
        // Its warnings go to stderr by default; ours go through tracing (see `Guide::new`).
        factory.quiet();
        *factory.limits_mut() = grammar_limits();
        tracing::debug!(vocab_size, ms = began.elapsed().as_millis() as u64, "grammar vocabulary built");
        Ok(Self { factory: Arc::new(factory), vocab_size })
    }

    /// A fresh matcher for `constraint`. A schema or grammar llguidance cannot express is an
    /// `InvalidSetting` whose message names what it could not.
    pub fn guide(&self, constraint: &Constraint) -> Result<Guide> {
        let parser = self.factory.create_parser(constraint.grammar()).map_err(|e| invalid(constraint, &e.to_string()))?;
        let mut matcher = Matcher::new(Ok(parser));
        if let Some(error) = matcher.get_error() {
            return Err(invalid(constraint, &error));
        }
        for warning in matcher.grammar_warnings() {
            tracing::warn!("constraint ({}): {warning}", constraint.kind());
        }
        Ok(Guide { matcher, vocab_size: self.vocab_size })
    }
}

fn invalid(constraint: &Constraint, error: &str) -> EngineError {
    // llguidance's messages can carry the whole grammar; the first line says what is wrong.
    let first = error.lines().next().unwrap_or(error).trim();
    let what = match constraint {
        Constraint::JsonSchema(_) | Constraint::JsonObject => "the JSON schema cannot be used for constrained decoding",
        Constraint::Regex(_) => "the regular expression cannot be used for constrained decoding",
        Constraint::Lark(_) => "the Lark grammar cannot be used for constrained decoding",
    };
    EngineError::invalid("constraint", format!("{what}: {first}"))
}

/// One row's matcher: where the reply stands in its grammar.
pub struct Guide {
    matcher: Matcher,
    vocab_size: usize,
}

impl fmt::Debug for Guide {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Guide").field("finished", &self.matcher.is_stopped()).finish_non_exhaustive()
    }
}

impl Guide {
    /// The tokens allowed next. Costs up to a millisecond or so for large vocabularies and
    /// grammars: the decode loop runs it on a worker while the forward pass runs.
    /// A grammar that allows nothing here (a dead end) is an error, never an empty mask.
    pub fn mask(&mut self) -> Result<TokenMask> {
        let mask = self.matcher.compute_mask().map_err(|e| self.dead_end(&e.to_string()))?;
        if mask.is_zero() {
            return Err(self.dead_end("the grammar allows no token here"));
        }
        Ok(TokenMask { allowed: mask, vocab_size: self.vocab_size })
    }

    /// Advances past `token` (sampled under the last mask, or forced).
    pub fn consume(&mut self, token: u32) -> Result<()> {
        self.matcher.consume_token(token).map_err(|e| self.dead_end(&e.to_string()))
    }

    /// The tokens the grammar forces from here (each the only choice), not yet consumed: pass
    /// each to [`Self::consume`] as it is fed. Empty when nothing is forced.
    pub fn forced(&mut self) -> Vec<u32> {
        self.matcher.compute_ff_tokens()
    }

    /// The grammar is complete and allows nothing more: the reply ends here.
    pub fn finished(&self) -> bool {
        self.matcher.is_stopped() && !self.matcher.is_error()
    }

    fn dead_end(&self, why: &str) -> EngineError {
        let why = self.matcher.get_error().unwrap_or_else(|| why.to_owned());
        let first = why.lines().next().unwrap_or(&why).trim().to_owned();
        EngineError::Constraint(format!("the reply reached a point its grammar cannot continue from ({first})"))
    }
}

/// The tokens a grammar allows at one step, over the model's logits.
#[derive(Clone)]
pub struct TokenMask {
    allowed: SimpleVob,
    vocab_size: usize,
}

impl fmt::Debug for TokenMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenMask").field("allowed", &self.count()).field("vocab_size", &self.vocab_size).finish()
    }
}

impl TokenMask {
    pub fn allows(&self, token: u32) -> bool {
        (token as usize) < self.vocab_size && self.allowed.is_allowed(token)
    }

    /// How many tokens it allows.
    pub fn count(&self) -> usize {
        self.allowed.iter().filter(|&t| (t as usize) < self.vocab_size).count()
    }

    /// The allowed ids, ascending.
    pub fn allowed(&self) -> Vec<u32> {
        self.allowed.iter().filter(|&t| (t as usize) < self.vocab_size).collect()
    }

    /// Sets every disallowed logit to -inf (`logits` has one entry per vocabulary id).
    pub fn apply(&self, logits: &mut [f32]) {
        self.allowed.iter_unset_entries(|id| {
            if let Some(logit) = logits.get_mut(id) {
                *logit = f32::NEG_INFINITY;
            }
        });
    }

    /// The allowed id with the largest logit, the lowest id among equals (as MLX's argmax
    /// picks); `None` when every allowed logit is NaN or -inf.
    pub fn best(&self, logits: &[f32]) -> Option<u32> {
        let mut best: Option<(usize, f32)> = None;
        self.allowed.iter_set_entries(|id| {
            if let Some(&logit) = logits.get(id) {
                if logit > best.map_or(f32::NEG_INFINITY, |(_, b)| b) {
                    best = Some((id, logit));
                }
            }
        });
        best.map(|(id, _)| id as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::{compact, Constraint};

    #[test]
    fn schemas_default_to_compact_json() {
        let schema = compact(serde_json::json!({ "type": "object" }));
        assert_eq!(schema["x-guidance"]["whitespace_flexible"], false);
        let own = compact(serde_json::json!({ "type": "object", "x-guidance": { "whitespace_flexible": true } }));
        assert_eq!(own["x-guidance"]["whitespace_flexible"], true);
    }

    #[test]
    fn kinds_are_named() {
        assert_eq!(Constraint::JsonObject.kind(), "json_object");
        assert_eq!(Constraint::Regex("a+".into()).kind(), "regex");
    }
}
