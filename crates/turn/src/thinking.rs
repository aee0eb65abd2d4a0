//! The thinking switch and the reasoning effort: one rule for every front door. A model's
//! template says what it reads (`ModelInfo::thinking_switch`, `ModelInfo::reasoning_effort`);
//! a turn's choices reach it as template switches, and only the switches it reads.

use std::collections::BTreeMap;

use confab_engine::ModelInfo;
use serde_json::{Map, Value};

use crate::error::TurnError;

/// What a turn asks of a reasoning model; `None`: the template's default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Thinking {
    /// Thinking on or off.
    pub enabled: Option<bool>,
    /// How hard to think (`none`, `low`, `medium`, `high`...), for templates that read it.
    /// `none` turns thinking off unless `enabled` says otherwise.
    pub effort: Option<String>,
}

impl Thinking {
    pub fn on(enabled: bool) -> Self {
        Self { enabled: Some(enabled), effort: None }
    }

    /// The template switches for `model`: these choices where its template reads them, under
    /// the switches the turn sets itself (`own`, checked with [`checked_switches`]), which win.
    pub fn switches(&self, model: &ModelInfo, own: &BTreeMap<String, Value>) -> BTreeMap<String, Value> {
        let mut switches = own.clone();
        let enabled = self.enabled.or(self.effort.as_deref().map(|effort| effort != "none"));
        if let (true, Some(enabled)) = (model.thinking_switch, enabled) {
            switches.entry("enable_thinking".into()).or_insert(Value::Bool(enabled));
        }
        if let (true, Some(effort)) = (model.reasoning_effort, &self.effort) {
            switches.entry("reasoning_effort".into()).or_insert(Value::from(effort.as_str()));
        }
        switches
    }
}

/// Template switches a turn may set itself, checked: names as templates use them, never the
/// variables the prompt is built with.
pub fn checked_switches(switches: &Map<String, Value>) -> Result<BTreeMap<String, Value>, TurnError> {
    const RESERVED: [&str; 5] = ["messages", "tools", "add_generation_prompt", "documents", "bos_token"];
    let mut out = BTreeMap::new();
    for (name, value) in switches {
        let identifier = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        if !identifier || RESERVED.contains(&name.as_str()) || name.ends_with("_token") {
            return Err(TurnError::Switch { name: name.clone() });
        }
        out.insert(name.clone(), value.clone());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn switches_cannot_replace_the_prompts_variables() {
        let ok = checked_switches(json!({"enable_thinking": false}).as_object().unwrap()).unwrap();
        assert_eq!(ok["enable_thinking"], json!(false));
        for bad in ["messages", "eos_token", "a-b", ""] {
            assert!(checked_switches(json!({ bad: 1 }).as_object().unwrap()).is_err(), "{bad}");
        }
    }
}
