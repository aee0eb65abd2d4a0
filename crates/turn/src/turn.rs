//! A chat turn as every front door gives it, and the engine request it makes.

use std::collections::BTreeMap;

use confab_engine::ChatOptions;
use confab_engine::Constraint;
use confab_engine::SamplingParams;
use confab_engine::{ContextPolicy, ModelId, ModelInfo, Prompt, Request};
use serde_json::Value;

use crate::error::TurnError;
use crate::thinking::Thinking;
use crate::tools::Tools;

/// One chat turn: the conversation so far (messages with their media), the tools and the tool
/// choice, thinking and effort, template switches of the turn's own, the sampling (the model's
/// defaults with the turn's choices over them, `sampling_params`), what the reply must match,
/// and what to do with a conversation longer than the context.
#[derive(Debug, Clone)]
pub struct ChatTurn {
    pub prompt: Prompt,
    pub tools: Tools,
    pub thinking: Thinking,
    /// Checked with `checked_switches`; they win over `thinking`.
    pub switches: BTreeMap<String, Value>,
    pub sampling: SamplingParams,
    pub constraint: Option<Constraint>,
    pub context_policy: ContextPolicy,
}

impl ChatTurn {
    pub fn new(prompt: Prompt, sampling: SamplingParams) -> Self {
        Self {
            prompt,
            tools: Tools::default(),
            thinking: Thinking::default(),
            switches: BTreeMap::new(),
            sampling,
            constraint: None,
            context_policy: ContextPolicy::default(),
        }
    }

    /// The template's inputs for `model`: the tools shown, and the switches.
    pub fn chat_options(&self, model: &ModelInfo) -> ChatOptions {
        ChatOptions { tools: self.tools.shown(), switches: self.thinking.switches(model, &self.switches), reply_prefix: None }
    }

    /// The engine request for this turn on `model` (loaded as `id`). A reply that must call a
    /// tool is held to the call's grammar; the reply keeps the markup its reader parses (a
    /// reasoning block, calls) when the model has reasoning or the turn offers tools.
    pub fn request(&self, model: &ModelInfo, id: ModelId) -> Result<Request, TurnError> {
        let mut request = Request::new(id, self.prompt.clone(), self.sampling.clone());
        request.constraint = self.constraint.clone();
        request.context_policy = self.context_policy;
        let mut chat = self.chat_options(model);
        self.tools.hold_required_call(model, &mut chat, &mut request)?;
        request.chat = chat;
        request.reply_markup = model.reply_format.reasoning.is_some() || self.tools.offered();
        Ok(request)
    }
}
