//! Structured output: Chat Completions' `response_format`, Responses' `text.format` and Ollama's
//! `format` as the engine's [`Constraint`].
//!
//! - `{"type": "text"}` (or no field): free text.
//! - `{"type": "json_object"}`: any JSON object.
//! - `{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}` (Chat Completions)
//!   or `{"type": "json_schema", "name", "schema", "strict"}` (Responses): JSON matching the
//!   schema. Decoding is constrained whether `strict` is true or not (it costs little and never
//!   gives a reply that fails to parse); with no `schema`, any JSON value.
//!
//! - Ollama's `format`: `"json"` (any JSON object) or the JSON Schema itself; `""` or none:
//!   free text.
//!
//! A shape this file does not know is a 400 naming the field; a schema the engine's grammar
//! compiler cannot express is refused by the engine's check, also as a 400 naming the field
//! and the feature (error.rs).

use confab_engine::Constraint;
use serde_json::Value;

use super::error::ApiError;

/// Where a request puts its format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatField {
    /// Chat Completions' `response_format`: the schema's fields nested under `json_schema`.
    ResponseFormat,
    /// Responses' `text.format`: the schema's fields at its top level.
    TextFormat,
}

impl FormatField {
    pub fn param(self) -> &'static str {
        match self {
            Self::ResponseFormat => "response_format",
            Self::TextFormat => "text.format",
        }
    }
}

/// The constraint the format asks for; `None` for free text.
pub fn constraint(format: Option<&Value>, field: FormatField) -> Result<Option<Constraint>, ApiError> {
    let Some(format) = format.filter(|f| !f.is_null()) else { return Ok(None) };
    let param = field.param();
    let bad = |message: String| ApiError::invalid(Some(param), message);
    let kind = format
        .get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| bad(format!("{param} needs a `type`: \"text\", \"json_object\" or \"json_schema\".")))?;
    match kind {
        "text" => Ok(None),
        "json_object" => Ok(Some(Constraint::JsonObject)),
        "json_schema" => {
            let (spec, at) = match field {
                FormatField::ResponseFormat => (format.get("json_schema").and_then(Value::as_object), format!("{param}.json_schema")),
                FormatField::TextFormat => (format.as_object(), param.to_string()),
            };
            let spec = spec.ok_or_else(|| {
                bad(format!(
                    "{param} of type json_schema needs a `json_schema` object: {{\"name\": ..., \"schema\": {{...}}, \"strict\": true}}."
                ))
            })?;
            if let Some(name) = spec.get("name") {
                let valid = name.as_str().is_some_and(|n| {
                    !n.is_empty() && n.len() <= 64 && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                });
                if !valid {
                    return Err(bad(format!("{at}.name must be 1 to 64 letters, digits, underscores or dashes; got {name}.")));
                }
            }
            if let Some(strict) = spec.get("strict").filter(|s| !s.is_null() && !s.is_boolean()) {
                return Err(bad(format!("{at}.strict must be true or false; got {strict}.")));
            }
            match spec.get("schema") {
                None | Some(Value::Null) => Ok(Some(Constraint::JsonSchema(serde_json::json!({})))),
                Some(schema @ Value::Object(_)) => Ok(Some(Constraint::JsonSchema(schema.clone()))),
                Some(other) => Err(bad(format!("{at}.schema must be a JSON Schema object; got {other}."))),
            }
        }
        other => Err(bad(format!("{param} type `{other}` is not supported; use \"text\", \"json_object\" or \"json_schema\"."))),
    }
}

/// Ollama's `format`: `"json"` or a JSON Schema object; `""` (or none) for free text.
pub fn ollama_format(format: Option<&Value>) -> Result<Option<Constraint>, ApiError> {
    match format {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(kind)) if kind.is_empty() => Ok(None),
        Some(Value::String(kind)) if kind == "json" => Ok(Some(Constraint::JsonObject)),
        Some(schema @ Value::Object(_)) => Ok(Some(Constraint::JsonSchema(schema.clone()))),
        Some(other) => Err(ApiError::invalid(Some("format"), format!("format must be \"json\" or a JSON Schema object; got {other}."))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{constraint, ollama_format, Constraint, FormatField};

    #[test]
    fn ollamas_format_is_json_or_a_schema() {
        assert_eq!(ollama_format(None).unwrap(), None);
        assert_eq!(ollama_format(Some(&json!(""))).unwrap(), None);
        assert_eq!(ollama_format(Some(&json!("json"))).unwrap(), Some(Constraint::JsonObject));
        let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]});
        assert_eq!(ollama_format(Some(&schema)).unwrap(), Some(Constraint::JsonSchema(schema.clone())));
        for bad in [json!("xml"), json!(3), json!(["json"])] {
            assert_eq!(ollama_format(Some(&bad)).unwrap_err().param.as_deref(), Some("format"), "{bad}");
        }
    }

    #[test]
    fn formats_map_to_constraints() {
        assert_eq!(constraint(None, FormatField::ResponseFormat).unwrap(), None);
        assert_eq!(constraint(Some(&json!({"type": "text"})), FormatField::ResponseFormat).unwrap(), None);
        assert_eq!(constraint(Some(&json!({"type": "json_object"})), FormatField::ResponseFormat).unwrap(), Some(Constraint::JsonObject));
        let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
        let format = json!({"type": "json_schema", "json_schema": {"name": "thing", "schema": schema, "strict": true}});
        assert_eq!(constraint(Some(&format), FormatField::ResponseFormat).unwrap(), Some(Constraint::JsonSchema(schema.clone())));
        let flat = json!({"type": "json_schema", "name": "thing", "schema": schema, "strict": true});
        assert_eq!(constraint(Some(&flat), FormatField::TextFormat).unwrap(), Some(Constraint::JsonSchema(schema)));
    }

    #[test]
    fn bad_formats_name_the_param() {
        for format in [
            json!({"type": "xml"}),
            json!({"json_schema": {}}),
            json!({"type": "json_schema"}),
            json!({"type": "json_schema", "json_schema": {"name": "has space", "schema": {}}}),
            json!({"type": "json_schema", "json_schema": {"name": "x", "schema": "not a schema"}}),
            json!({"type": "json_schema", "json_schema": {"name": "x", "schema": {}, "strict": "yes"}}),
        ] {
            let error = constraint(Some(&format), FormatField::ResponseFormat).unwrap_err();
            assert_eq!(error.param.as_deref(), Some("response_format"), "{format}");
            assert_eq!(error.status, 400);
        }
        let error = constraint(Some(&json!({"type": "json_schema", "name": "x", "schema": 3})), FormatField::TextFormat).unwrap_err();
        assert_eq!((error.param.as_deref(), error.message.contains("text.format.schema")), (Some("text.format"), true));
    }
}
