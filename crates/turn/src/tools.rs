//! The tools a turn offers and the tool choice. A reply that must call a tool (`required`, or
//! a named one) is held to a grammar of that call, whoever asks: the app and every API alike.

use confab_engine::ChatOptions;
use confab_engine::Constraint;
use confab_engine::{ModelInfo, Request};
use serde_json::{json, Value};

use crate::error::TurnError;

/// At most this many tools per turn (OpenAI's limit; `turn.tools`).
pub const MAX_TOOLS: usize = confab_limits::TURN_TOOLS.as_usize();

/// Which tools the model may or must call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ToolChoice {
    /// No call: the tools are not shown to the model.
    None,
    #[default]
    Auto,
    /// Some call.
    Required,
    /// A call of this tool.
    Named(String),
}

/// A function tool, as a front door describes it.
pub struct ToolDefinition<'a> {
    pub name: &'a str,
    pub description: Option<&'a str>,
    /// A JSON Schema object; `None` takes no arguments.
    pub parameters: Option<&'a Value>,
}

/// A turn's tools, checked: each `{"type": "function", "function": {"name", "description",
/// "parameters"}}` as templates read them.
#[derive(Debug, Clone, Default)]
pub struct Tools {
    pub definitions: Vec<Value>,
    pub choice: ToolChoice,
}

fn name_of(tool: &Value) -> &str {
    tool["function"]["name"].as_str().unwrap_or_default()
}

impl Tools {
    /// Checks names, schemas and the choice.
    pub fn new(definitions: Vec<ToolDefinition>, choice: ToolChoice) -> Result<Self, TurnError> {
        if definitions.len() > MAX_TOOLS {
            return Err(TurnError::TooManyTools { count: definitions.len(), max: MAX_TOOLS });
        }
        let mut names: Vec<&str> = Vec::new();
        let mut out = Vec::with_capacity(definitions.len());
        for (index, tool) in definitions.iter().enumerate() {
            let valid =
                !tool.name.is_empty() && tool.name.len() <= 64 && tool.name.chars().all(|c| c.is_ascii_alphanumeric() || "_-".contains(c));
            if !valid {
                return Err(TurnError::ToolName { index, name: tool.name.to_string() });
            }
            if names.contains(&tool.name) {
                return Err(TurnError::DuplicateTool { index, name: tool.name.to_string() });
            }
            names.push(tool.name);
            let parameters = match tool.parameters {
                None | Some(Value::Null) => json!({ "type": "object", "properties": {} }),
                Some(schema @ Value::Object(_)) => schema.clone(),
                Some(_) => return Err(TurnError::ToolParameters { index }),
            };
            let mut function = json!({ "name": tool.name, "parameters": parameters });
            if let Some(description) = tool.description {
                function["description"] = Value::from(description);
            }
            out.push(json!({ "type": "function", "function": function }));
        }
        Self::checked(out, choice)
    }

    /// Definitions already in the templates' shape (the app's, from its tool servers), with the
    /// choice checked against them.
    pub fn from_definitions(definitions: Vec<Value>, choice: ToolChoice) -> Result<Self, TurnError> {
        Self::checked(definitions, choice)
    }

    fn checked(definitions: Vec<Value>, choice: ToolChoice) -> Result<Self, TurnError> {
        match &choice {
            ToolChoice::Named(name) if !definitions.iter().any(|t| name_of(t) == name) => {
                return Err(TurnError::UnknownChoice {
                    name: name.clone(),
                    available: definitions.iter().map(|t| name_of(t).to_string()).collect(),
                })
            }
            ToolChoice::Required | ToolChoice::Named(_) if definitions.is_empty() => return Err(TurnError::ChoiceWithoutTools),
            _ => {}
        }
        Ok(Self { definitions, choice })
    }

    /// Whether the model sees tools and its calls are read.
    pub fn offered(&self) -> bool {
        !self.definitions.is_empty() && self.choice != ToolChoice::None
    }

    /// The tools the model is shown.
    pub fn shown(&self) -> Vec<Value> {
        if self.offered() {
            self.definitions.clone()
        } else {
            vec![]
        }
    }

    /// The tools one of which the reply must call; empty when it may answer in text.
    fn required(&self) -> Vec<Value> {
        match &self.choice {
            ToolChoice::Named(wanted) => self.definitions.iter().filter(|t| name_of(t) == wanted).cloned().collect(),
            ToolChoice::Required => self.definitions.clone(),
            ToolChoice::Auto | ToolChoice::None => vec![],
        }
    }

    /// Holds a reply that must call a tool to a grammar of that call, its arguments valid
    /// against the tool's schema, so even a small model makes a call that validates, in the
    /// model's own call syntax; for a schema the grammar cannot hold a call to (`$ref`, a
    /// `pattern` on a text value...), the call's opening is written for the model and the
    /// reply stops at the call's end.
    pub(crate) fn hold_required_call(&self, model: &ModelInfo, chat: &mut ChatOptions, request: &mut Request) -> Result<(), TurnError> {
        let required = self.required();
        if required.is_empty() {
            return Ok(());
        }
        let format = model.reply_format;
        match format.call_grammar(&required, &model.markup_tokens) {
            Some(_) if request.constraint.is_some() => return Err(TurnError::CallAndFormat),
            Some(grammar) => {
                request.constraint = Some(Constraint::Lark(grammar));
                // Empty, but it closes a reasoning block the template opened.
                chat.reply_prefix = Some(String::new());
            }
            None => {
                chat.reply_prefix = Some(if required.len() == 1 {
                    format.call_opening(name_of(&required[0]))
                } else {
                    format.any_call_opening().to_string()
                });
                request.sampling.stop.extend(format.call_close().map(str::to_string));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> ToolDefinition<'_> {
        ToolDefinition { name, description: Some("d"), parameters: None }
    }

    #[test]
    fn tools_are_checked() {
        let tools = Tools::new(vec![tool("get_time")], ToolChoice::Auto).unwrap();
        assert_eq!(
            tools.definitions[0],
            json!({"type": "function", "function": {"name": "get_time", "description": "d", "parameters": {"type": "object", "properties": {}}}})
        );
        let err = |definitions, choice| Tools::new(definitions, choice).unwrap_err();
        assert!(matches!(err(vec![tool("a b")], ToolChoice::Auto), TurnError::ToolName { index: 0, .. }));
        assert!(matches!(err(vec![tool("a"), tool("a")], ToolChoice::Auto), TurnError::DuplicateTool { index: 1, .. }));
        assert!(matches!(err(vec![tool("a")], ToolChoice::Named("b".into())), TurnError::UnknownChoice { .. }));
        assert!(matches!(err(vec![], ToolChoice::Required), TurnError::ChoiceWithoutTools));
        let many: Vec<String> = (0..=MAX_TOOLS).map(|i| format!("t{i}")).collect();
        assert!(err(many.iter().map(|n| tool(n)).collect(), ToolChoice::Auto).to_string().contains("at most 128"));
    }

    #[test]
    fn tools_refused_by_the_choice_are_not_shown() {
        let tools = Tools::new(vec![tool("a")], ToolChoice::None).unwrap();
        assert!(!tools.offered());
        assert!(tools.shown().is_empty());
        assert!(Tools::default().shown().is_empty());
    }
}
