//! Gemma 4: `<|tool_call>call:name{key:value,...}<tool_call|>` in Gemma's own notation: bare
//! keys in sorted order (as its template writes them), strings between `<|"|>`, numbers,
//! `true`/`false`/`null`, `{...}` and `[...]`. The grammar writes each value under its part of
//! the schema; the parser reads the notation back as JSON.

use serde_json::{Map, Value};

use super::lark::{each_tool, length_bounds, literal, regex_literal, required, string_choices, unsupported, Lark};
use super::{call, python_word, whole, CallFormat, ParsedCall};

/// What opens and closes a string in Gemma's notation (one token in its vocabulary).
pub(super) const STRING: &str = "<|\"|>";

pub(super) struct Gemma4;

impl CallFormat for Gemma4 {
    fn written_by(&self, template: &str) -> bool {
        template.contains("<|tool_call>")
    }

    fn call_markers(&self) -> (&'static str, Option<&'static str>) {
        ("<|tool_call>", Some("<tool_call|>"))
    }

    fn markup(&self) -> Vec<&'static str> {
        vec!["<|tool_call>", "<tool_call|>", STRING]
    }

    fn any_call_opening(&self) -> &'static str {
        "<|tool_call>call:"
    }

    fn call_opening(&self, name: &str) -> String {
        format!("<|tool_call>call:{name}{{")
    }

    fn parse_calls<'a>(&self, body: &'a str, _tools: &[Value]) -> Option<(Vec<ParsedCall>, &'a str)> {
        let rest = body.trim().strip_prefix("call:")?;
        let brace = rest.find('{')?;
        let mut reader = GemmaReader { text: &rest[brace..], depth: 0 };
        let arguments = reader.value()?;
        reader.text.trim().is_empty().then_some(())?;
        whole(call(&rest[..brace], arguments))
    }

    fn call_grammar(&self, lark: &mut Lark, tools: &[Value]) -> Option<String> {
        let calls = each_tool(tools, |name, schema| {
            let arguments = GemmaValues { lark }.object(schema)?;
            Some(format!("{} {arguments}", literal(&format!("call:{name}"))))
        })?;
        Some(format!("{} ({calls}) {}", lark.markup("<|tool_call>"), lark.markup("<tool_call|>")))
    }
}

/// How deep objects and lists may nest in a call's arguments: serde_json's own limit. Each level
/// is a call, and a reply is the model's to write (`[[[[…` a hundred thousand deep ran the
/// stack out).
const MAX_DEPTH: usize = 128;

/// Gemma 4's argument notation: JSON-like, with bare keys and strings between `<|"|>`.
struct GemmaReader<'a> {
    text: &'a str,
    /// The objects and lists the reader is in.
    depth: usize,
}

impl GemmaReader<'_> {
    fn value(&mut self) -> Option<Value> {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        let value = self.value_here();
        self.depth -= 1;
        value
    }

    fn value_here(&mut self) -> Option<Value> {
        self.skip_space();
        if let Some(rest) = self.text.strip_prefix(STRING) {
            let end = rest.find(STRING)?;
            self.text = &rest[end + STRING.len()..];
            return Some(Value::String(rest[..end].to_string()));
        }
        match self.text.chars().next()? {
            '{' => {
                self.text = &self.text[1..];
                let mut object = Map::new();
                loop {
                    self.skip_space();
                    if let Some(rest) = self.text.strip_prefix('}') {
                        self.text = rest;
                        return Some(Value::Object(object));
                    }
                    let key = match self.text.strip_prefix(STRING).or_else(|| self.text.strip_prefix('"')) {
                        Some(_) => self.value()?.as_str()?.to_string(),
                        None => {
                            let end = self.text.find(':')?;
                            let key = self.text[..end].trim().to_string();
                            self.text = &self.text[end..];
                            key
                        }
                    };
                    self.skip_space();
                    self.text = self.text.strip_prefix(':')?;
                    object.insert(key, self.value()?);
                    self.separator('}')?;
                }
            }
            '[' => {
                self.text = &self.text[1..];
                let mut list = Vec::new();
                loop {
                    self.skip_space();
                    if let Some(rest) = self.text.strip_prefix(']') {
                        self.text = rest;
                        return Some(Value::Array(list));
                    }
                    list.push(self.value()?);
                    self.separator(']')?;
                }
            }
            '"' => {
                let mut stream = serde_json::Deserializer::from_str(self.text).into_iter::<Value>();
                let value = stream.next()?.ok()?;
                self.text = &self.text[stream.byte_offset()..];
                Some(value)
            }
            _ => {
                let end = self.text.find([',', '}', ']']).unwrap_or(self.text.len());
                let word = self.text[..end].trim();
                self.text = &self.text[end..];
                // A null as its template writes it (Python's `None`) too.
                Some(
                    serde_json::from_str(word)
                        .ok()
                        .or_else(|| python_word(word).filter(Value::is_null))
                        .unwrap_or_else(|| Value::String(word.to_string())),
                )
            }
        }
    }

    /// After an item: a comma, or the closing bracket (left for the caller).
    fn separator(&mut self, close: char) -> Option<()> {
        self.skip_space();
        if let Some(rest) = self.text.strip_prefix(',') {
            self.text = rest;
            return Some(());
        }
        self.text.starts_with(close).then_some(())
    }

    fn skip_space(&mut self) {
        self.text = self.text.trim_start();
    }
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
                "integer" | "number" => self.lark.json(numeric_schema(kind, schema)),
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
        let open = self.lark.markup(STRING);
        if let Some(choices) = string_choices(schema) {
            let choices: Vec<String> = choices.iter().map(|c| format!("{open} {} {open}", literal(c))).collect();
            return Some(format!("({})", choices.join(" | ")));
        }
        if schema.get("pattern").is_some() {
            return None;
        }
        let delimiter = regex_literal(STRING);
        let close = regex_literal("<tool_call|>");
        let bounds = length_bounds(schema);
        Some(if self.lark.is_token(STRING) {
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
        let (at, name) = self.lark.reserve();
        self.lark.any = Some(name.clone());
        let string = self.string(&Value::Object(Map::new())).expect("a plain string schema");
        let number = self.lark.json(serde_json::json!({ "type": "number" }));
        let key = self.lark.terminal("/[A-Za-z_][A-Za-z0-9_]*/".into());
        let object = format!("\"{{\" ({key} \":\" {name} (\",\" {key} \":\" {name})*)? \"}}\"");
        let array = format!("\"[\" ({name} (\",\" {name})*)? \"]\"");
        self.lark.write_reserved(at, format!("{string} | {number} | \"true\" | \"false\" | \"null\" | {object} | {array}"));
        name
    }

    /// A constant in Gemma's notation (as its template's `format_argument` writes it).
    fn literal_value(&mut self, value: &Value) -> Option<String> {
        Some(match value {
            Value::String(s) => {
                let open = self.lark.markup(STRING);
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

/// The keywords of a numeric schema a JSON grammar enforces, under `kind`.
fn numeric_schema(kind: &str, schema: &Value) -> Value {
    let mut numeric = Map::new();
    numeric.insert("type".into(), Value::from(kind));
    for key in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"] {
        if let Some(v) = schema.get(key) {
            numeric.insert(key.into(), v.clone());
        }
    }
    Value::Object(numeric)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::testing::{
        admits_and_refuses, call, every_step, format, random_replies_read_back, tools, weather, GrammarCases, GEMMA, GEMMA_MARKUP,
    };
    use super::STRING;
    use crate::text::{ReplyPart, ToolSyntax};

    /// Arguments nested a hundred thousand deep are not a call, and not a stack overflow (each
    /// level was a call of the reader; seen reading the parser for the reply_parser fuzz target).
    #[test]
    fn deeply_nested_arguments_are_no_call() {
        let gemma = format("<|tool_call><|channel>");
        let reply = format!("<|tool_call>call:get_weather{{city:{}<tool_call|>", "[".repeat(100_000));
        let parts = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || {
                let mut parser = crate::text::ReplyParser::new(gemma, false, tools());
                let mut parts = parser.push(&reply);
                parts.extend(parser.finish());
                parts
            })
            .unwrap()
            .join()
            .expect("no stack overflow");
        assert!(parts.iter().all(|p| !matches!(p, ReplyPart::ToolCall(_))), "{parts:?}");
    }

    #[test]
    fn gemma4_calls_parse() {
        let gemma = format("<|tool_call><|channel>");
        let text = "<|channel>thought\nWeather.<channel|><|tool_call>call:get_weather{city:<|\"|>Den Haag, NL<|\"|>,days:4,opts:{metric:true,tags:[<|\"|>a<|\"|>,2]}}<tool_call|>";
        let mut expected = weather("Den Haag, NL", Some(4));
        if let ReplyPart::ToolCall(c) = &mut expected {
            c.arguments["opts"] = json!({"metric": true, "tags": ["a", 2]});
        }
        every_step(gemma, false, tools(), text, &[ReplyPart::Reasoning("Weather.".into()), expected]);
    }

    #[test]
    fn the_opening_and_the_arguments_read_as_the_call() {
        let gemma = format("<|tool_call><|channel>");
        assert!(gemma.markup().contains(&"<|channel>") && gemma.markup().contains(&STRING));
        let gemma = format("<|tool_call>");
        assert_eq!(gemma.tools, ToolSyntax::Gemma4);
        let text = format!("{}city:<|\"|>Paris<|\"|>}}<tool_call|>", gemma.call_opening("get_weather"));
        every_step(gemma, false, tools(), &text, &[weather("Paris", None)]);
    }

    fn cases() -> GrammarCases {
        GrammarCases::new(
            vec![
                ("<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|>", call("get_weather", json!({"city": "Paris"}))),
                (
                    "<|tool_call>call:get_weather{city:<|\"|>Den Haag, \"NL\"\n{x}<|\"|>,days:16,unit:<|\"|>fahrenheit<|\"|>}<tool_call|>",
                    call("get_weather", json!({"city": "Den Haag, \"NL\"\n{x}", "days": 16, "unit": "fahrenheit"})),
                ),
                (
                    "<|tool_call>call:search{exact:false,filters:{max:-2.5e3,site:<|\"|>x<|\"|>},query:<|\"|>q<|\"|>,tags:[<|\"|>a<|\"|>,<|\"|><|\"|>]}<tool_call|>",
                    call("search", json!({"exact": false, "filters": {"max": -2500.0, "site": "x"}, "query": "q", "tags": ["a", ""]})),
                ),
                ("<|tool_call>call:search{exact:true,query:<|\"|><|\"|>,tags:[]}<tool_call|>", call("search", json!({"exact": true, "query": "", "tags": []}))),
            ],
            vec![
                // Out of the template's (sorted) order; a string cut by its delimiter; too many tags; no city.
                "<|tool_call>call:get_weather{days:3,city:<|\"|>Paris<|\"|>}<tool_call|>",
                "<|tool_call>call:get_weather{city:<|\"|>a<|\"|>b<|\"|>}<tool_call|>",
                "<|tool_call>call:search{exact:true,query:<|\"|>q<|\"|>,tags:[<|\"|>a<|\"|>,<|\"|>b<|\"|>,<|\"|>c<|\"|>,<|\"|>d<|\"|>]}<tool_call|>",
                "<|tool_call>call:get_weather{}<tool_call|>",
                "<|tool_call>call:search{exact:True,query:<|\"|>q<|\"|>}<tool_call|>",
                "<|tool_call>call:search{exact:true,filters:{max:1},query:<|\"|>q<|\"|>}<tool_call|>",
            ],
        )
    }

    #[test]
    fn the_grammar_admits_the_calls_the_parser_reads_and_refuses_the_rest() {
        admits_and_refuses(&GEMMA, ToolSyntax::Gemma4, &cases());
    }

    #[test]
    fn markup_the_vocabulary_has_as_tokens_is_named_by_id() {
        assert_eq!(GEMMA_MARKUP.markup_tokens.len(), 3);
        admits_and_refuses(&GEMMA_MARKUP, ToolSyntax::Gemma4, &cases());
    }

    #[test]
    fn the_parser_reads_every_call_the_grammar_lets_a_model_write() {
        random_replies_read_back(&GEMMA, ToolSyntax::Gemma4);
    }
}
