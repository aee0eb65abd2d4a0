//! Function tools as OpenAI's Chat Completions and Ollama's API both define them:
//! `{"type": "function", "function": {"name", "description", "parameters"}}`.

use serde::Deserialize;
use serde_json::Value;

use super::error::ApiError;
use super::turn::ToolDefinition;

#[derive(Debug, Deserialize)]
pub struct ToolField {
    /// `function` (Ollama's clients may leave it out).
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub function: Option<FunctionField>,
}

#[derive(Debug, Deserialize)]
pub struct FunctionField {
    pub name: String,
    pub description: Option<String>,
    pub parameters: Option<Value>,
}

/// The tools' definitions for the turn; a tool of another type is refused, naming its index.
pub fn definitions(tools: &[ToolField]) -> Result<Vec<ToolDefinition<'_>>, ApiError> {
    tools
        .iter()
        .enumerate()
        .map(|(i, tool)| match (tool.kind.as_deref().unwrap_or("function"), &tool.function) {
            ("function", Some(f)) => {
                Ok(ToolDefinition { name: &f.name, description: f.description.as_deref(), parameters: f.parameters.as_ref() })
            }
            (kind, _) => Err(ApiError::invalid(
                Some(&format!("tools[{i}]")),
                format!("tools[{i}] of type `{kind}` (or with no `function`) is not supported; define function tools: {{\"type\": \"function\", \"function\": {{\"name\", \"description\", \"parameters\"}}}}."),
            )),
        })
        .collect()
}
