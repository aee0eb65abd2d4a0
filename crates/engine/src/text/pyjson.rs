//! JSON as Python's `json.dumps` writes it, for the `tojson` filter of chat templates.
//!
//! Hugging Face replaces Jinja's `tojson` with `json.dumps(x, ensure_ascii=False, indent=...,
//! separators=..., sort_keys=...)`, so tool schemas reach the model as `{"a": 1, "b": [1, 2]}`:
//! spaces after `:` and `,`, no HTML escaping, keys in the order given. Models were trained on
//! that exact text, so we write the same.

use serde_json::Value;

#[derive(Debug, Clone)]
pub(crate) struct PyJson {
    /// `Some` breaks lines and indents each level by this text.
    pub indent: Option<String>,
    pub item_separator: String,
    pub key_separator: String,
    pub ensure_ascii: bool,
    pub sort_keys: bool,
}

impl PyJson {
    /// `json.dumps` defaults for this `indent`: `", "` between items, or `","` when indenting.
    pub fn new(indent: Option<String>) -> Self {
        let item_separator = if indent.is_some() { "," } else { ", " }.to_string();
        Self { indent, item_separator, key_separator: ": ".into(), ensure_ascii: false, sort_keys: false }
    }

    pub fn dumps(&self, value: &Value) -> String {
        let mut out = String::new();
        self.write(value, 0, &mut out);
        out
    }

    fn write(&self, value: &Value, depth: usize, out: &mut String) {
        match value {
            Value::Array(items) if !items.is_empty() => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    self.separate(i, depth + 1, out);
                    self.write(item, depth + 1, out);
                }
                self.newline(depth, out);
                out.push(']');
            }
            Value::Object(map) if !map.is_empty() => {
                let mut entries: Vec<_> = map.iter().collect();
                if self.sort_keys {
                    entries.sort_by(|a, b| a.0.cmp(b.0));
                }
                out.push('{');
                for (i, (key, item)) in entries.into_iter().enumerate() {
                    self.separate(i, depth + 1, out);
                    self.string(key, out);
                    out.push_str(&self.key_separator);
                    self.write(item, depth + 1, out);
                }
                self.newline(depth, out);
                out.push('}');
            }
            Value::Array(_) => out.push_str("[]"),
            Value::Object(_) => out.push_str("{}"),
            Value::String(s) => self.string(s, out),
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => out.push_str(&n.to_string()),
        }
    }

    fn separate(&self, index: usize, depth: usize, out: &mut String) {
        if index > 0 {
            out.push_str(&self.item_separator);
        }
        self.newline(depth, out);
    }

    fn newline(&self, depth: usize, out: &mut String) {
        if let Some(indent) = &self.indent {
            out.push('\n');
            for _ in 0..depth {
                out.push_str(indent);
            }
        }
    }

    fn string(&self, s: &str, out: &mut String) {
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if (c as u32) < 0x20 || (self.ensure_ascii && !c.is_ascii()) => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        out.push_str(&format!("\\u{unit:04x}"));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn default_separators_match_python() {
        let v = json!({"name": "get_weather", "args": [1, 2.5, true, null], "empty": {}, "none": []});
        assert_eq!(PyJson::new(None).dumps(&v), r#"{"name": "get_weather", "args": [1, 2.5, true, null], "empty": {}, "none": []}"#);
    }

    #[test]
    fn indent_matches_python() {
        let v = json!({"a": [1, {"b": "c"}], "d": {}});
        let want = "{\n  \"a\": [\n    1,\n    {\n      \"b\": \"c\"\n    }\n  ],\n  \"d\": {}\n}";
        assert_eq!(PyJson::new(Some("  ".into())).dumps(&v), want);
    }

    #[test]
    fn strings_escape_like_python_without_ensure_ascii() {
        let v = json!("é <b> \"q\" \\ \n\u{1} 🦀");
        assert_eq!(PyJson::new(None).dumps(&v), r#""é <b> \"q\" \\ \n\u0001 🦀""#);
        let ascii = PyJson { ensure_ascii: true, ..PyJson::new(None) };
        assert_eq!(ascii.dumps(&json!("é🦀")), r#""\u00e9\ud83e\udd80""#);
    }

    #[test]
    fn keys_keep_their_order_unless_sorted() {
        let v: Value = serde_json::from_str(r#"{"z": 1, "a": 2}"#).unwrap();
        assert_eq!(PyJson::new(None).dumps(&v), r#"{"z": 1, "a": 2}"#);
        let sorted = PyJson { sort_keys: true, ..PyJson::new(None) };
        assert_eq!(sorted.dumps(&v), r#"{"a": 2, "z": 1}"#);
    }
}
