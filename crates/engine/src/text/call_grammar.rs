//! Grammars (llguidance's Lark) for a reply that is exactly one call of one of the request's
//! tools, written in the syntax the model's template writes for earlier calls, with arguments
//! valid against the tool's JSON Schema: what a `tool_choice` of `required` or a named function
//! holds a reply to.
//!
//! Each grammar admits only text the reply parser (`reply.rs`) reads back as that call:
//! - Hermes: `<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>`; Llama 3: the bare
//!   JSON with `"parameters"`. Both are JSON under the schema (`%json`).
//! - Qwen3.5 / Qwen3-Coder (`QwenXml`): `<tool_call>\n<function=name>\n` then one
//!   `<parameter=key>\nvalue\n</parameter>\n` per argument in the schema's order (required ones
//!   always, optional ones maybe), then `</function>\n</tool_call>`. A value the parser reads as
//!   text (a string parameter: `xml_value_is_text`) is raw text without `</parameter>` or
//!   `</tool_call>` in it (the parser ends a value, and the block, at the first); any other
//!   value is compact JSON under its schema.
//! - Mistral: `[TOOL_CALLS]name[ARGS]{...}`, the arguments JSON under the schema.
//! - Gemma 4: `<|tool_call>call:name{key:value,...}<tool_call|>` in Gemma's own notation: bare
//!   keys in sorted order (as its template writes them), strings between `<|"|>`, numbers,
//!   `true`/`false`/`null`, `{...}` and `[...]`, each under its part of the schema.
//! - Harmony (gpt-oss): `<|channel|>commentary to=functions.name <|constrain|>json<|message|>`
//!   then the arguments JSON under the schema (the model ends the message with `<|call|>`).
//!
//! Markup the vocabulary has as one token (`<tool_call>` in Qwen's, `<|"|>` in Gemma's) is
//! named by id (`<[id]>`): grammar text never matches a special token, and a model asked to
//! spell its own markup in pieces writes worse arguments.
//!
//! What a grammar cannot hold a value to is refused (`None`: the caller falls back to writing
//! the call's opening): `$ref`, `allOf`, `not`, conditionals, and `pattern` on a string that is
//! not JSON. `format` is an annotation (as JSON Schema validators treat it by default).

use serde_json::{Map, Value};

use super::reply::{xml_value_is_text, ReplyFormat, ToolSyntax, GEMMA4_STRING};

impl ReplyFormat {
    /// A grammar (llguidance's Lark) for a reply that is exactly one call of one of `tools`
    /// (definitions in OpenAI's shape), in this model's syntax, its arguments valid against the
    /// tool's schema; `None` when a schema asks for what the grammar cannot enforce (those get
    /// `call_opening` instead). `markup_tokens`: the markup the model's vocabulary has as single
    /// tokens, with their ids (`ModelInfo::markup_tokens`).
    pub fn call_grammar(&self, tools: &[Value], markup_tokens: &[(&str, u32)]) -> Option<String> {
        call_grammar(self.tools, tools, markup_tokens)
    }
}

/// The grammar for one call of one of `tools` (definitions in OpenAI's shape); `None` when a
/// schema uses what the syntax's grammar cannot enforce. `markup_tokens`: markup the vocabulary
/// has as single tokens, with their ids.
pub(super) fn call_grammar(syntax: ToolSyntax, tools: &[Value], markup_tokens: &[(&str, u32)]) -> Option<String> {
    if tools.is_empty() {
        return None;
    }
    let mut lark = Lark { rules: Vec::new(), markup_tokens, any: None };
    let start = match syntax {
        ToolSyntax::Hermes | ToolSyntax::Llama3Json => {
            let key = if syntax == ToolSyntax::Hermes { "arguments" } else { "parameters" };
            let call = lark.rule(format!("%json {}", json_call_schema(tools, key)));
            match syntax {
                ToolSyntax::Hermes => format!("{} \"\\n\" {call} \"\\n\" {}", lark.markup("<tool_call>"), lark.markup("</tool_call>")),
                _ => call,
            }
        }
        ToolSyntax::QwenXml => {
            let calls = each_tool(tools, |name, schema| qwen_xml_call(&mut lark, name, schema))?;
            format!("{} \"\\n\" ({calls}) {}", lark.markup("<tool_call>"), lark.markup("</tool_call>"))
        }
        ToolSyntax::Mistral => {
            let calls = each_tool(tools, |name, schema| {
                let arguments = lark.rule(format!("%json {}", compact_schema(schema.clone())));
                Some(format!("{} {} {arguments}", literal(name), lark.markup("[ARGS]")))
            })?;
            format!("{} ({calls})", lark.markup("[TOOL_CALLS]"))
        }
        ToolSyntax::Gemma4 => {
            let calls = each_tool(tools, |name, schema| {
                let arguments = GemmaValues { lark: &mut lark }.object(schema)?;
                Some(format!("{} {arguments}", literal(&format!("call:{name}"))))
            })?;
            format!("{} ({calls}) {}", lark.markup("<|tool_call>"), lark.markup("<tool_call|>"))
        }
        ToolSyntax::Harmony => {
            let calls = each_tool(tools, |name, schema| {
                let arguments = lark.rule(format!("%json {}", compact_schema(schema.clone())));
                let header = format!("{} {}", literal(&format!("commentary to=functions.{name} ")), lark.markup("<|constrain|>"));
                Some(format!("{header} {} {} {arguments}", literal("json"), lark.markup("<|message|>")))
            })?;
            format!("{} ({calls})", lark.markup("<|channel|>"))
        }
    };
    let mut grammar = format!("start: {start}\n");
    for rule in &lark.rules {
        grammar.push_str(rule);
        grammar.push('\n');
    }
    Some(grammar)
}

/// Alternatives, one per tool: `(name, parameters schema)` to its expression.
fn each_tool(tools: &[Value], mut call: impl FnMut(&str, &Value) -> Option<String>) -> Option<String> {
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
fn json_call_schema(tools: &[Value], arguments_key: &str) -> Value {
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
    let schema = match <[Value; 1]>::try_from(calls) {
        Ok([one]) => one,
        Err(many) => serde_json::json!({ "anyOf": many }),
    };
    compact_schema(schema)
}

/// Compact JSON, as models write calls: no runs of white space to wander in.
fn compact_schema(mut schema: Value) -> Value {
    if let Some(object) = schema.as_object_mut() {
        object.insert("x-guidance".into(), serde_json::json!({ "whitespace_flexible": false }));
    }
    schema
}

/// A Lark string literal (JSON string syntax, which Lark's lexer reads; DEL escaped too).
fn literal(text: &str) -> String {
    Value::from(text).to_string().replace('\u{7f}', "\\u007f")
}

/// Text for a Lark regular expression that matches `text` literally.
fn regex_literal(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if "\\.+*?()|[]{}^$#&-~/".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The grammar being built: named rules beside `start`.
struct Lark<'a> {
    rules: Vec<String>,
    markup_tokens: &'a [(&'a str, u32)],
    /// The rule for a value of no particular schema (Gemma's notation), once made.
    any: Option<String>,
}

impl Lark<'_> {
    /// Markup: its token where the vocabulary has one, else its text.
    fn markup(&self, text: &str) -> String {
        match self.markup_tokens.iter().find(|(t, _)| *t == text) {
            Some((_, id)) => format!("<[{id}]>"),
            None => literal(text),
        }
    }

    fn is_token(&self, text: &str) -> bool {
        self.markup_tokens.iter().any(|(t, _)| *t == text)
    }

    /// A new rule; its name.
    fn rule(&mut self, body: String) -> String {
        let name = format!("r{}", self.rules.len());
        self.rules.push(format!("{name}: {body}"));
        name
    }

    /// A new terminal (a regular language: `/../ & ~/../` is allowed); its name.
    fn terminal(&mut self, body: String) -> String {
        let name = format!("T{}", self.rules.len());
        self.rules.push(format!("{name}: {body}"));
        name
    }
}

/// `{min,max}` of a string schema's length, as a regex quantifier.
fn length_bounds(schema: &Value) -> String {
    let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0);
    match schema.get("maxLength").and_then(Value::as_u64) {
        Some(max) => format!("{{{min},{max}}}"),
        None => format!("{{{min},}}"),
    }
}

/// Keywords no grammar here enforces; a schema with one gets no grammar.
fn unsupported(schema: &Value) -> bool {
    ["$ref", "allOf", "not", "if", "then", "else", "dependentSchemas", "dependentRequired", "patternProperties", "propertyNames"]
        .iter()
        .any(|k| schema.get(k).is_some())
}

/// One call in Qwen's XML form.
fn qwen_xml_call(lark: &mut Lark, name: &str, schema: &Value) -> Option<String> {
    if unsupported(schema) {
        return None;
    }
    let empty = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    let required = required(schema);
    let mut parts = vec![literal(&format!("<function={name}>\n"))];
    for (key, property) in properties {
        // The parser reads a key up to its first `>`.
        if key.is_empty() || key.contains(['<', '>', '\n']) {
            return None;
        }
        let value = qwen_xml_value(lark, property)?;
        let parameter = lark.rule(format!("{} {value}", literal(&format!("<parameter={key}>\n"))));
        parts.push(if required.contains(&key.as_str()) { parameter } else { format!("{parameter}?") });
    }
    parts.push(literal("</function>\n"));
    Some(format!("({})", parts.join(" ")))
}

/// A parameter's value, through the closing `\n</parameter>\n`.
fn qwen_xml_value(lark: &mut Lark, schema: &Value) -> Option<String> {
    let close = literal("\n</parameter>\n");
    if !xml_value_is_text(Some(schema)) {
        if unsupported(schema) {
            return None;
        }
        let value = lark.rule(format!("%json {}", compact_schema(schema.clone())));
        return Some(format!("{value} {close}"));
    }
    if let Some(choices) = string_choices(schema) {
        let choices: Vec<String> = choices.iter().map(|c| literal(c)).collect();
        return Some(format!("({}) {close}", choices.join(" | ")));
    }
    if schema.get("pattern").is_some() {
        return None;
    }
    // One terminal through `</parameter>`: the text, then the first `</parameter>`, with
    // nothing after it (a terminal followed by a literal it could also begin would be read
    // greedily into the terminal).
    let text = lark.terminal(format!(
        "/(?s:.{})\\n<\\/parameter>/ & ~/(?s:.*)<\\/parameter>(?s:.+)/ & ~/(?s:.*)<\\/tool_call>(?s:.*)/",
        length_bounds(schema)
    ));
    Some(format!("{text} \"\\n\""))
}

/// A string schema's allowed values, when it lists them (`enum`, `const`).
fn string_choices(schema: &Value) -> Option<Vec<String>> {
    let list = match (schema.get("const"), schema.get("enum")) {
        (Some(one), _) => vec![one.clone()],
        (None, Some(Value::Array(many))) => many.clone(),
        _ => return None,
    };
    list.into_iter().map(|v| v.as_str().map(str::to_string)).collect()
}

fn required(schema: &Value) -> Vec<&str> {
    schema.get("required").and_then(Value::as_array).map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default()
}

/// Values in Gemma 4's argument notation, under their schemas.
struct GemmaValues<'a, 'b> {
    lark: &'a mut Lark<'b>,
}

impl GemmaValues<'_, '_> {
    /// Any value its schema allows.
    fn value(&mut self, schema: &Value) -> Option<String> {
        if unsupported(schema) || schema.as_bool() == Some(false) {
            return None;
        }
        if let Some(choices) = schema.get("const").map(|c| vec![c.clone()]).or_else(|| schema.get("enum")?.as_array().cloned()) {
            let written: Option<Vec<String>> = choices.iter().map(|c| self.literal_value(c)).collect();
            return Some(format!("({})", written?.join(" | ")));
        }
        if let Some(any) = schema.get("anyOf").or_else(|| schema.get("oneOf")).and_then(Value::as_array) {
            let mut options = Vec::new();
            for option in any {
                // The branch's own keywords, with the outer ones it does not override.
                let mut merged = schema.as_object().cloned().unwrap_or_default();
                merged.remove("anyOf");
                merged.remove("oneOf");
                if let Some(own) = option.as_object() {
                    merged.extend(own.clone());
                }
                options.push(self.value(&Value::Object(merged))?);
            }
            return Some(format!("({})", options.join(" | ")));
        }
        let types: Vec<&str> = match schema.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
            _ => vec!["string", "number", "boolean", "null", "object", "array"],
        };
        let mut options = Vec::new();
        for kind in types {
            options.push(match kind {
                "string" => self.string(schema)?,
                "integer" | "number" => {
                    let mut numeric = Map::new();
                    numeric.insert("type".into(), Value::from(kind));
                    for key in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"] {
                        if let Some(v) = schema.get(key) {
                            numeric.insert(key.into(), v.clone());
                        }
                    }
                    self.lark.rule(format!("%json {}", compact_schema(Value::Object(numeric))))
                }
                "boolean" => "(\"true\" | \"false\")".into(),
                "null" => "\"null\"".into(),
                "object" => self.object(schema)?,
                "array" => self.array(schema)?,
                _ => return None,
            });
        }
        Some(format!("({})", options.join(" | ")))
    }

    /// `{key:value,...}`: the schema's properties in the template's (sorted) order, required
    /// ones always; an object without listed properties takes any keys.
    fn object(&mut self, schema: &Value) -> Option<String> {
        if unsupported(schema) {
            return None;
        }
        let required = required(schema);
        let Some(properties) = schema.get("properties").and_then(Value::as_object).filter(|p| !p.is_empty()) else {
            return match schema.get("additionalProperties") {
                Some(Value::Bool(false)) => Some("\"{}\"".into()),
                Some(extra @ Value::Object(_)) => {
                    let value = self.value(extra)?;
                    Some(self.free_object(&value))
                }
                _ => {
                    let any = self.any();
                    Some(self.free_object(&any))
                }
            };
        };
        // Python's `dictsort`: case-insensitive, stable.
        let mut keys: Vec<&String> = properties.keys().collect();
        keys.sort_by_key(|k| k.to_lowercase());
        let mut members = Vec::new();
        for key in keys {
            if !gemma_key(key) {
                return None;
            }
            let value = self.value(&properties[key])?;
            members.push((format!("{} {value}", literal(&format!("{key}:"))), required.contains(&key.as_str())));
        }
        // Commas between the members present: `first` rules start the list, `rest` rules go on.
        let (mut first, mut rest) = ("\"\"".to_string(), "\"\"".to_string());
        for (member, is_required) in members.into_iter().rev() {
            let (new_first, new_rest) = if is_required {
                (format!("{member} {rest}"), format!("\",\" {member} {rest}"))
            } else {
                (format!("({member} {rest}) | {first}"), format!("(\",\" {member} {rest}) | {rest}"))
            };
            first = self.lark.rule(new_first);
            rest = self.lark.rule(new_rest);
        }
        Some(format!("\"{{\" {first} \"}}\""))
    }

    fn free_object(&mut self, value: &str) -> String {
        let key = self.lark.terminal("/[A-Za-z_][A-Za-z0-9_]*/".into());
        let member = self.lark.rule(format!("{key} \":\" {value}"));
        format!("\"{{\" ({member} (\",\" {member})*)? \"}}\"")
    }

    fn array(&mut self, schema: &Value) -> Option<String> {
        if schema.get("prefixItems").is_some() || schema.get("contains").is_some() || schema.get("uniqueItems") == Some(&Value::Bool(true))
        {
            return None;
        }
        let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0);
        let max = schema.get("maxItems").and_then(Value::as_u64);
        if max == Some(0) || schema.get("items") == Some(&Value::Bool(false)) {
            return (min == 0).then(|| "\"[]\"".into());
        }
        let item = match schema.get("items").filter(|i| i.as_object().is_some_and(|o| !o.is_empty())) {
            Some(items) => self.value(items)?,
            None => self.any(),
        };
        let item = self.lark.rule(item);
        // The items after the first: `{min - 1, max - 1}` of them.
        let more = match max {
            Some(max) if max < min => return None,
            Some(1) => String::new(),
            Some(max) => format!("(\",\" {item}){{{},{}}}", min.saturating_sub(1), max - 1),
            None => format!("(\",\" {item}){{{},}}", min.saturating_sub(1)),
        };
        let list = format!("{item} {more}");
        Some(if min == 0 { format!("\"[\" ({list})? \"]\"") } else { format!("\"[\" {list} \"]\"") })
    }

    /// A string: `<|"|>`, text without the delimiter (the parser ends a string at the first)
    /// or the call's close, `<|"|>`.
    fn string(&mut self, schema: &Value) -> Option<String> {
        let open = self.lark.markup(GEMMA4_STRING);
        if let Some(choices) = string_choices(schema) {
            let choices: Vec<String> = choices.iter().map(|c| format!("{open} {} {open}", literal(c))).collect();
            return Some(format!("({})", choices.join(" | ")));
        }
        if schema.get("pattern").is_some() {
            return None;
        }
        let delimiter = regex_literal(GEMMA4_STRING);
        let close = regex_literal("<tool_call|>");
        let bounds = length_bounds(schema);
        Some(if self.lark.is_token(GEMMA4_STRING) {
            let text = self.lark.terminal(format!("/(?s:.{bounds})/ & ~/(?s:.*)({delimiter}|{close})(?s:.*)/"));
            format!("{open} {text} {open}")
        } else {
            // One terminal through the closing delimiter (see `qwen_xml_value`).
            let text = self.lark.terminal(format!("/(?s:.{bounds}){delimiter}/ & ~/(?s:.*){delimiter}(?s:.+)/ & ~/(?s:.*){close}(?s:.*)/"));
            format!("{open} {text}")
        })
    }

    /// A value of no particular schema.
    fn any(&mut self) -> String {
        if let Some(name) = &self.lark.any {
            return name.clone();
        }
        // Named before it is written: it refers to itself.
        let at = self.lark.rules.len();
        let name = format!("r{at}");
        self.lark.rules.push(String::new());
        self.lark.any = Some(name.clone());
        let string = self.string(&Value::Object(Map::new())).expect("a plain string schema");
        let number = self.lark.rule(format!("%json {}", compact_schema(serde_json::json!({ "type": "number" }))));
        let key = self.lark.terminal("/[A-Za-z_][A-Za-z0-9_]*/".into());
        let object = format!("\"{{\" ({key} \":\" {name} (\",\" {key} \":\" {name})*)? \"}}\"");
        let array = format!("\"[\" ({name} (\",\" {name})*)? \"]\"");
        self.lark.rules[at] = format!("{name}: {string} | {number} | \"true\" | \"false\" | \"null\" | {object} | {array}");
        name
    }

    /// A constant in Gemma's notation (as its template's `format_argument` writes it).
    fn literal_value(&mut self, value: &Value) -> Option<String> {
        Some(match value {
            Value::String(s) => {
                let open = self.lark.markup(GEMMA4_STRING);
                format!("{open} {} {open}", literal(s))
            }
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort_by_key(|k| k.to_lowercase());
                let mut parts = vec!["\"{\"".to_string()];
                for (i, key) in keys.into_iter().enumerate() {
                    if !gemma_key(key) {
                        return None;
                    }
                    let comma = if i > 0 { "," } else { "" };
                    parts.push(literal(&format!("{comma}{key}:")));
                    parts.push(self.literal_value(&map[key])?);
                }
                parts.push("\"}\"".into());
                parts.join(" ")
            }
            Value::Array(items) => {
                let mut parts = vec!["\"[\"".to_string()];
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        parts.push("\",\"".into());
                    }
                    parts.push(self.literal_value(item)?);
                }
                parts.push("\"]\"".into());
                parts.join(" ")
            }
            other => literal(&other.to_string()),
        })
    }
}

/// A key Gemma's parser reads back as written: bare, up to the first `:`.
fn gemma_key(key: &str) -> bool {
    !key.is_empty() && !key.contains([':', '}']) && key.trim() == key && !key.starts_with(['"', '<'])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::constraint::{Constraint, Grammars};
    use crate::text::{ParsedCall, ReplyFormat, ReplyParser, ReplyPart, Tokenizer};

    const TINY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/reference/fixtures/tiny");

    fn weather() -> Value {
        json!({"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "minLength": 1},
            "days": {"type": "integer", "minimum": 1, "maximum": 16},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
            "required": ["city"]}}})
    }

    fn search() -> Value {
        json!({"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {
            "query": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
            "filters": {"type": "object", "properties": {"site": {"type": "string"}, "max": {"type": "number"}}, "required": ["site"]},
            "exact": {"type": "boolean"}},
            "required": ["query", "exact"]}}})
    }

    fn tools() -> Vec<Value> {
        vec![weather(), search()]
    }

    /// A vocabulary, its grammars, and its end-of-reply id.
    struct Vocabulary {
        tokenizer: Tokenizer,
        grammars: Grammars,
        eos: u32,
        /// The markup it has as single tokens.
        markup_tokens: Vec<(&'static str, u32)>,
    }

    impl Vocabulary {
        fn new(tokenizer: Tokenizer, markup: &[&'static str]) -> Self {
            let eos = tokenizer.eos_id().expect("an EOS id");
            let grammars = Grammars::new(&tokenizer, tokenizer.vocab_size(), &[eos]).unwrap();
            let special = crate::constraint::special_ids(&tokenizer);
            let markup_tokens =
                markup.iter().filter_map(|&m| Some((m, tokenizer.token_to_id(m).filter(|id| special.contains(id))?))).collect();
            Self { tokenizer, grammars, eos, markup_tokens }
        }

        fn tiny(name: &str) -> Self {
            Self::new(Tokenizer::from_hf_folder(format!("{TINY}/{name}")).unwrap(), &[])
        }

        /// The tiny checkpoint's vocabulary with `markup` added as tokens (special ones as
        /// released vocabularies have them).
        fn with_markup(name: &str, markup: &[&'static str], folder: &std::path::Path) -> Self {
            for file in ["tokenizer.json", "tokenizer_config.json"] {
                std::fs::copy(format!("{TINY}/{name}/{file}"), folder.join(file)).unwrap();
            }
            let path = folder.join("tokenizer.json");
            let mut json: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let next = json["model"]["vocab"].as_object().unwrap().len() + json["added_tokens"].as_array().unwrap().len();
            for (i, token) in markup.iter().enumerate() {
                json["added_tokens"].as_array_mut().unwrap().push(json!({"id": next + i, "content": token, "single_word": false,
                    "lstrip": false, "rstrip": false, "normalized": false, "special": !token.starts_with("<tool_call>") && !token.starts_with("</")}));
            }
            std::fs::write(&path, json.to_string()).unwrap();
            let tokenizer = Tokenizer::from_hf_folder(folder).unwrap();
            for token in markup {
                assert!(tokenizer.token_to_id(token).is_some(), "{token} is a token");
            }
            Self::new(tokenizer, markup)
        }

        fn grammar(&self, syntax: ToolSyntax, tools: &[Value]) -> String {
            call_grammar(syntax, tools, &self.markup_tokens).unwrap_or_else(|| panic!("a grammar for {syntax:?}"))
        }

        /// Whether the grammar admits `text` whole, token by token as the tokenizer splits it.
        fn admits(&self, grammar: &str, text: &str) -> bool {
            let mut guide = self.grammars.guide(&Constraint::Lark(grammar.to_string())).unwrap_or_else(|e| panic!("{e}\n{grammar}"));
            for id in self.tokenizer.encode(text, false).unwrap() {
                match guide.mask() {
                    Ok(mask) if mask.allows(id) => guide.consume(id).unwrap(),
                    _ => return false,
                }
            }
            guide.finished() || guide.mask().is_ok_and(|m| m.allows(self.eos))
        }
    }

    fn call(name: &str, arguments: Value) -> ParsedCall {
        ParsedCall { name: name.into(), arguments }
    }

    /// The parser reads `text` as exactly `expected`.
    fn reads_as(syntax: ToolSyntax, text: &str, expected: &ParsedCall) {
        let format = ReplyFormat { reasoning: None, tools: syntax };
        let mut parser = ReplyParser::new(format, false, Some(tools()));
        let mut parts = parser.push(text);
        parts.extend(parser.finish());
        assert_eq!(parts, [ReplyPart::ToolCall(expected.clone())], "{text:?}");
    }

    /// Texts each grammar admits, and how they read; texts it refuses.
    fn cases(syntax: ToolSyntax) -> (Vec<(String, ParsedCall)>, Vec<String>) {
        let paris = || call("get_weather", json!({"city": "Paris"}));
        let admitted = |list: Vec<(&str, ParsedCall)>| list.into_iter().map(|(t, c)| (t.to_string(), c)).collect();
        let refused = |list: Vec<&str>| list.into_iter().map(str::to_string).collect();
        match syntax {
            ToolSyntax::QwenXml => (
                admitted(vec![
                    ("<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>", paris()),
                    (
                        "<tool_call>\n<function=get_weather>\n<parameter=city>\nNew York,\nNY\n\n</parameter>\n<parameter=days>\n3\n</parameter>\n<parameter=unit>\ncelsius\n</parameter>\n</function>\n</tool_call>",
                        call("get_weather", json!({"city": "New York,\nNY\n", "days": 3, "unit": "celsius"})),
                    ),
                    (
                        "<tool_call>\n<function=search>\n<parameter=query>\n{\"not\": \"json\"} & <b>\n</parameter>\n<parameter=tags>\n[\"a\",\"b\"]\n</parameter>\n<parameter=filters>\n{\"site\":\"x.org\",\"max\":2.5}\n</parameter>\n<parameter=exact>\ntrue\n</parameter>\n</function>\n</tool_call>",
                        call("search", json!({"query": "{\"not\": \"json\"} & <b>", "tags": ["a", "b"], "filters": {"site": "x.org", "max": 2.5}, "exact": true})),
                    ),
                ]),
                refused(vec![
                    // No city; an empty one; a value past its schema; the parser's end of a value inside one.
                    "<tool_call>\n<function=get_weather>\n</function>\n</tool_call>",
                    "<tool_call>\n<function=get_weather>\n<parameter=city>\n\n</parameter>\n</function>\n</tool_call>",
                    "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n30\n</parameter>\n</function>\n</tool_call>",
                    "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=unit>\nkelvin\n</parameter>\n</function>\n</tool_call>",
                    "<tool_call>\n<function=get_weather>\n<parameter=city>\na</parameter>b\n</parameter>\n</function>\n</tool_call>",
                    "<tool_call>\n<function=get_weather>\n<parameter=city>\na</tool_call>\n</parameter>\n</function>\n</tool_call>",
                    "<tool_call>\n<function=get_weather>\n<parameter=town>\nParis\n</parameter>\n</function>\n</tool_call>",
                    "<tool_call>\n<function=search>\n<parameter=query>\nq\n</parameter>\n<parameter=exact>\nTrue\n</parameter>\n</function>\n</tool_call>",
                    "<tool_call>\n<function=get_time>\n</function>\n</tool_call>",
                ]),
            ),
            ToolSyntax::Gemma4 => (
                admitted(vec![
                    ("<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|>", paris()),
                    (
                        "<|tool_call>call:get_weather{city:<|\"|>Den Haag, \"NL\"\n{x}<|\"|>,days:16,unit:<|\"|>fahrenheit<|\"|>}<tool_call|>",
                        call("get_weather", json!({"city": "Den Haag, \"NL\"\n{x}", "days": 16, "unit": "fahrenheit"})),
                    ),
                    (
                        "<|tool_call>call:search{exact:false,filters:{max:-2.5e3,site:<|\"|>x<|\"|>},query:<|\"|>q<|\"|>,tags:[<|\"|>a<|\"|>,<|\"|><|\"|>]}<tool_call|>",
                        call("search", json!({"exact": false, "filters": {"max": -2500.0, "site": "x"}, "query": "q", "tags": ["a", ""]})),
                    ),
                    ("<|tool_call>call:search{exact:true,query:<|\"|><|\"|>,tags:[]}<tool_call|>", call("search", json!({"exact": true, "query": "", "tags": []}))),
                ]),
                refused(vec![
                    // Out of the template's (sorted) order; a string cut by its delimiter; too many tags; no city.
                    "<|tool_call>call:get_weather{days:3,city:<|\"|>Paris<|\"|>}<tool_call|>",
                    "<|tool_call>call:get_weather{city:<|\"|>a<|\"|>b<|\"|>}<tool_call|>",
                    "<|tool_call>call:search{exact:true,query:<|\"|>q<|\"|>,tags:[<|\"|>a<|\"|>,<|\"|>b<|\"|>,<|\"|>c<|\"|>,<|\"|>d<|\"|>]}<tool_call|>",
                    "<|tool_call>call:get_weather{}<tool_call|>",
                    "<|tool_call>call:search{exact:True,query:<|\"|>q<|\"|>}<tool_call|>",
                    "<|tool_call>call:search{exact:true,filters:{max:1},query:<|\"|>q<|\"|>}<tool_call|>",
                ]),
            ),
            ToolSyntax::Mistral => (
                admitted(vec![
                    ("[TOOL_CALLS]get_weather[ARGS]{\"city\":\"Paris\"}", paris()),
                    ("[TOOL_CALLS]search[ARGS]{\"query\":\"q\",\"exact\":false}", call("search", json!({"query": "q", "exact": false}))),
                ]),
                refused(vec!["[TOOL_CALLS]get_weather[ARGS]{\"town\":\"Paris\"}", "[TOOL_CALLS]get_time[ARGS]{}", "[TOOL_CALLS][{\"name\":\"get_weather\"}]"]),
            ),
            ToolSyntax::Harmony => (
                admitted(vec![
                    ("<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}", paris()),
                    (
                        "<|channel|>commentary to=functions.search <|constrain|>json<|message|>{\"query\":\"q\",\"exact\":false}",
                        call("search", json!({"query": "q", "exact": false})),
                    ),
                ]),
                refused(vec![
                    "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"town\":\"Paris\"}",
                    "<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{}",
                    "<|channel|>final<|message|>Paris",
                ]),
            ),
            ToolSyntax::Hermes => (
                admitted(vec![("<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}\n</tool_call>", paris())]),
                refused(vec!["<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{}}\n</tool_call>"]),
            ),
            ToolSyntax::Llama3Json => (
                admitted(vec![("{\"name\":\"get_weather\",\"parameters\":{\"city\":\"Paris\"}}", paris())]),
                refused(vec!["{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}"]),
            ),
        }
    }

    const SYNTAXES: [ToolSyntax; 6] =
        [ToolSyntax::QwenXml, ToolSyntax::Gemma4, ToolSyntax::Mistral, ToolSyntax::Hermes, ToolSyntax::Llama3Json, ToolSyntax::Harmony];

    fn check(vocabulary: &Vocabulary, syntax: ToolSyntax) {
        let grammar = vocabulary.grammar(syntax, &tools());
        let (admitted, refused) = cases(syntax);
        for (text, expected) in &admitted {
            assert!(vocabulary.admits(&grammar, text), "{syntax:?} refuses {text:?}\n{grammar}");
            reads_as(syntax, text, expected);
        }
        for text in &refused {
            assert!(!vocabulary.admits(&grammar, text), "{syntax:?} admits {text:?}\n{grammar}");
        }
    }

    #[test]
    fn grammars_admit_the_calls_the_parser_reads_and_refuse_the_rest() {
        let qwen = Vocabulary::tiny("qwen3_5");
        let gemma = Vocabulary::tiny("gemma4");
        for syntax in SYNTAXES {
            check(if syntax == ToolSyntax::Gemma4 { &gemma } else { &qwen }, syntax);
        }
    }

    #[test]
    fn markup_the_vocabulary_has_as_tokens_is_named_by_id() {
        let folder = tempfile::tempdir().unwrap();
        let qwen = Vocabulary::with_markup("qwen3_5", &["<tool_call>", "</tool_call>"], folder.path());
        assert_eq!(qwen.markup_tokens.len(), 2);
        let grammar = qwen.grammar(ToolSyntax::QwenXml, &tools());
        assert!(grammar.starts_with(&format!("start: <[{}]>", qwen.markup_tokens[0].1)), "{grammar}");
        check(&qwen, ToolSyntax::QwenXml);
        check(&qwen, ToolSyntax::Hermes);

        let folder = tempfile::tempdir().unwrap();
        let gemma = Vocabulary::with_markup("gemma4", &["<|tool_call>", "<tool_call|>", GEMMA4_STRING], folder.path());
        assert_eq!(gemma.markup_tokens.len(), 3);
        check(&gemma, ToolSyntax::Gemma4);
    }

    #[test]
    fn the_parser_reads_every_call_the_grammar_lets_a_model_write() {
        // Random replies under each grammar (leaning towards the tokens that close what is
        // open, so that they end): each reads back as one call whose arguments fit the schema.
        let qwen = Vocabulary::tiny("qwen3_5");
        let gemma = Vocabulary::tiny("gemma4");
        for syntax in SYNTAXES {
            let vocabulary = if syntax == ToolSyntax::Gemma4 { &gemma } else { &qwen };
            let grammar = vocabulary.grammar(syntax, &tools());
            let mut finished = 0;
            for seed in 1..=20u64 {
                let Some(text) = random_reply(vocabulary, &grammar, seed) else { continue };
                finished += 1;
                let format = ReplyFormat { reasoning: None, tools: syntax };
                let mut parser = ReplyParser::new(format, false, Some(tools()));
                let mut parts = parser.push(&text);
                parts.extend(parser.finish());
                let [ReplyPart::ToolCall(call)] = parts.as_slice() else { panic!("{syntax:?}: {text:?} reads as {parts:?}") };
                fits(call).unwrap_or_else(|why| panic!("{syntax:?}: {text:?} reads as {call:?}: {why}"));
            }
            assert!(finished >= 10, "{syntax:?}: only {finished} of 20 random replies ended");
        }
    }

    /// A reply under `grammar`, its tokens picked at random; `None` when it runs long. Free
    /// text would rarely end by chance, so most picks go to the allowed tokens that carry on
    /// furthest with some closing markup.
    fn random_reply(vocabulary: &Vocabulary, grammar: &str, seed: u64) -> Option<String> {
        let closers = ["\n</parameter>\n", "</function>\n", "<|\"|>", "<tool_call|>", "</tool_call>", "}", "]", ",", "\""];
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let pieces: Vec<String> =
            (0..vocabulary.tokenizer.vocab_size() as u32).map(|id| vocabulary.tokenizer.decode(&[id], false).unwrap_or_default()).collect();
        let mut guide = vocabulary.grammars.guide(&Constraint::Lark(grammar.to_string())).unwrap();
        let mut ids = Vec::new();
        let mut text = String::new();
        for _ in 0..400 {
            if guide.finished() {
                return Some(text);
            }
            let mask = guide.mask().unwrap();
            if mask.allows(vocabulary.eos) {
                return Some(text);
            }
            // How far a token goes into a closer that the text so far may have begun.
            let reach = |piece: &str| {
                closers
                    .iter()
                    .flat_map(|c| (0..c.len()).filter(|&k| c.is_char_boundary(k) && text.ends_with(&c[..k])).map(move |k| (c, k)))
                    .filter(|(c, k)| !piece.is_empty() && c[*k..].starts_with(piece))
                    .map(|(_, k)| k + piece.len())
                    .max()
                    .unwrap_or(0)
            };
            let allowed = mask.allowed();
            let scored: Vec<(u32, usize)> =
                allowed.iter().map(|&id| (id, reach(pieces.get(id as usize).map_or("", String::as_str)))).collect();
            let best = scored.iter().map(|s| s.1).max().unwrap_or(0);
            let closing: Vec<u32> = scored.iter().filter(|s| best > 0 && s.1 == best).map(|s| s.0).collect();
            let pool = if !closing.is_empty() && next() % 5 != 0 { &closing } else { &allowed };
            let id = pool[(next() % pool.len() as u64) as usize];
            guide.consume(id).unwrap();
            ids.push(id);
            text = vocabulary.tokenizer.decode(&ids, false).unwrap();
        }
        None
    }

    /// Whether a call's arguments are valid against `tools()`'s schemas.
    fn fits(call: &ParsedCall) -> Result<(), String> {
        let arguments = call.arguments.as_object().ok_or("not an object")?;
        let (required, kinds): (&[&str], &[(&str, &str)]) = match call.name.as_str() {
            "get_weather" => (&["city"], &[("city", "string"), ("days", "integer"), ("unit", "unit")]),
            "search" => (&["query", "exact"], &[("query", "string"), ("tags", "tags"), ("filters", "filters"), ("exact", "boolean")]),
            other => return Err(format!("no tool {other}")),
        };
        for key in required {
            arguments.get(*key).ok_or(format!("{key} is missing"))?;
        }
        for (key, value) in arguments {
            // Keys the schema does not list are allowed (it does not forbid them).
            let Some(&(_, kind)) = kinds.iter().find(|(k, _)| k == key) else { continue };
            let ok = match kind {
                "string" => value.as_str().is_some_and(|s| key != "city" || !s.is_empty()),
                "integer" => value.as_i64().is_some_and(|n| (1..=16).contains(&n)),
                "unit" => value == "celsius" || value == "fahrenheit",
                "boolean" => value.is_boolean(),
                "tags" => value.as_array().is_some_and(|t| t.len() <= 3 && t.iter().all(Value::is_string)),
                // Other keys are allowed: the schema does not forbid them.
                _ => value
                    .as_object()
                    .is_some_and(|f| f.get("site").is_some_and(Value::is_string) && f.get("max").is_none_or(Value::is_number)),
            };
            if !ok {
                return Err(format!("{key} = {value} does not fit"));
            }
        }
        Ok(())
    }
}
