//! Pieces of a call grammar (llguidance's Lark) that formats share: the grammar being built,
//! literals, and JSON Schema helpers.

use serde_json::Value;

/// The grammar being built: named rules beside `start`.
pub(crate) struct Lark<'a> {
    rules: Vec<String>,
    markup_tokens: &'a [(&'a str, u32)],
    /// The rule for a value of no particular schema (Gemma's notation), once made.
    pub(super) any: Option<String>,
}

impl<'a> Lark<'a> {
    /// `markup_tokens`: markup the vocabulary has as single tokens, with their ids.
    pub(super) fn new(markup_tokens: &'a [(&'a str, u32)]) -> Self {
        Self { rules: Vec::new(), markup_tokens, any: None }
    }

    /// The whole grammar: `start`, then the rules.
    pub(super) fn grammar(self, start: &str) -> String {
        let mut grammar = format!("start: {start}\n");
        for rule in &self.rules {
            grammar.push_str(rule);
            grammar.push('\n');
        }
        grammar
    }

    /// Markup: its token where the vocabulary has one, else its text.
    pub(super) fn markup(&self, text: &str) -> String {
        match self.markup_tokens.iter().find(|(t, _)| *t == text) {
            Some((_, id)) => format!("<[{id}]>"),
            None => literal(text),
        }
    }

    pub(super) fn is_token(&self, text: &str) -> bool {
        self.markup_tokens.iter().any(|(t, _)| *t == text)
    }

    /// A new rule; its name.
    pub(super) fn rule(&mut self, body: String) -> String {
        let name = format!("r{}", self.rules.len());
        self.rules.push(format!("{name}: {body}"));
        name
    }

    /// A new terminal (a regular language: `/../ & ~/../` is allowed); its name.
    pub(super) fn terminal(&mut self, body: String) -> String {
        let name = format!("T{}", self.rules.len());
        self.rules.push(format!("{name}: {body}"));
        name
    }

    /// A rule named before it is written, for one that refers to itself; its name. Write it
    /// with `write_reserved`.
    pub(super) fn reserve(&mut self) -> (usize, String) {
        let at = self.rules.len();
        self.rules.push(String::new());
        (at, format!("r{at}"))
    }

    pub(super) fn write_reserved(&mut self, at: usize, body: String) {
        self.rules[at] = format!("r{at}: {body}");
    }

    /// A rule for JSON under `schema`, compact; its name.
    pub(super) fn json(&mut self, schema: Value) -> String {
        self.rule(format!("%json {}", compact_schema(schema)))
    }
}

/// Alternatives, one per tool: `(name, parameters schema)` to its expression.
pub(super) fn each_tool(tools: &[Value], mut call: impl FnMut(&str, &Value) -> Option<String>) -> Option<String> {
    let empty = serde_json::json!({ "type": "object" });
    let calls: Option<Vec<String>> = tools
        .iter()
        .map(|tool| {
            let function = tool.get("function").unwrap_or(tool);
            let name = function.get("name")?.as_str()?;
            call(name, function.get("parameters").unwrap_or(&empty))
        })
        .collect();
    Some(calls?.join(" | "))
}

/// The schema of a whole JSON call: `{"name": <one of the tools>, key: <its arguments>}`.
pub(super) fn json_call_schema(tools: &[Value], arguments_key: &str) -> Value {
    let calls: Vec<Value> = tools
        .iter()
        .map(|tool| {
            let function = tool.get("function").unwrap_or(tool);
            let parameters = function.get("parameters").cloned().unwrap_or_else(|| serde_json::json!({ "type": "object" }));
            serde_json::json!({
                "type": "object",
                "properties": { "name": { "const": function.get("name") }, arguments_key: parameters },
                "required": ["name", arguments_key],
                "additionalProperties": false,
            })
        })
        .collect();
    match <[Value; 1]>::try_from(calls) {
        Ok([one]) => one,
        Err(many) => serde_json::json!({ "anyOf": many }),
    }
}

/// Compact JSON, as models write calls: no runs of white space to wander in.
fn compact_schema(mut schema: Value) -> Value {
    if let Some(object) = schema.as_object_mut() {
        object.insert("x-guidance".into(), serde_json::json!({ "whitespace_flexible": false }));
    }
    schema
}

/// A Lark string literal (JSON string syntax, which Lark's lexer reads; DEL escaped too).
pub(super) fn literal(text: &str) -> String {
    Value::from(text).to_string().replace('\u{7f}', "\\u007f")
}

/// Text for a Lark regular expression that matches `text` literally.
pub(super) fn regex_literal(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if "\\.+*?()|[]{}^$#&-~/".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `{min,max}` of a string schema's length, as a regex quantifier.
pub(super) fn length_bounds(schema: &Value) -> String {
    let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0);
    match schema.get("maxLength").and_then(Value::as_u64) {
        Some(max) => format!("{{{min},{max}}}"),
        None => format!("{{{min},}}"),
    }
}

/// Keywords no grammar here enforces; a schema with one gets no grammar.
pub(super) fn unsupported(schema: &Value) -> bool {
    ["$ref", "allOf", "not", "if", "then", "else", "dependentSchemas", "dependentRequired", "patternProperties", "propertyNames"]
        .iter()
        .any(|k| schema.get(k).is_some())
}

/// A string schema's allowed values, when it lists them (`enum`, `const`).
pub(super) fn string_choices(schema: &Value) -> Option<Vec<String>> {
    let list = match (schema.get("const"), schema.get("enum")) {
        (Some(one), _) => vec![one.clone()],
        (None, Some(Value::Array(many))) => many.clone(),
        _ => return None,
    };
    list.into_iter().map(|v| v.as_str().map(str::to_string)).collect()
}

pub(super) fn required(schema: &Value) -> Vec<&str> {
    schema.get("required").and_then(Value::as_array).map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default()
}
