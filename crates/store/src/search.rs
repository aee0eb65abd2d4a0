//! Full-text search over message text (SQLite FTS5, kept in sync by triggers; see the schema).
//!
//! A user's query is never passed to FTS5 as syntax: each whitespace-separated word becomes a
//! quoted phrase (so `"`, `-`, `:`, `*`, `AND`, `NEAR(` … are just text), the words must all
//! match, and the last one matches as a prefix while it is being typed.

use serde::{Deserialize, Serialize};
use sqlx::Row;
use ts_rs::TS;

use crate::db::Store;
use crate::error::Result;
use crate::ids::{ConversationId, MessageId};
use crate::status::Role;

/// Most hits one search returns; bigger limits are clamped to it.
pub const MAX_HITS: u32 = 200;

/// Marks around matched words in FTS5's snippets (Unicode private use: never shown).
const OPEN: char = '\u{E000}';
const CLOSE: char = '\u{E001}';

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct SearchHit {
    pub conversation_id: ConversationId,
    pub conversation_title: String,
    pub message_id: MessageId,
    pub role: Role,
    /// Unix milliseconds.
    pub created_at: i64,
    /// An excerpt around the match, as plain-text pieces: render `highlight` ones marked. Kept
    /// as data rather than HTML so a message's own markup can never be interpreted.
    pub snippet: Vec<SnippetPart>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SnippetPart {
    pub text: String,
    pub highlight: bool,
}

impl SearchHit {
    /// The snippet as one string, matches in `[` `]` (for logs and tests).
    pub fn snippet_text(&self) -> String {
        self.snippet.iter().map(|p| if p.highlight { format!("[{}]", p.text) } else { p.text.clone() }).collect()
    }
}

impl Store {
    /// Messages containing every word of `query`, best match first. A query with no words
    /// (empty, or only punctuation) finds nothing. Streaming replies are found once finished.
    pub async fn search(&self, query: &str, limit: u32) -> Result<Vec<SearchHit>> {
        let Some(fts_query) = fts_query(query) else {
            return Ok(Vec::new());
        };
        let rows = sqlx::query(&format!(
            "SELECT m.conversation_id, c.title, m.id, m.role, m.created_at,
                    snippet(messages_fts, 0, '{OPEN}', '{CLOSE}', '…', 16) AS snippet
             FROM messages_fts
             JOIN messages m ON m.id = messages_fts.rowid
             JOIN conversations c ON c.id = m.conversation_id
             WHERE messages_fts MATCH ?1
             ORDER BY rank LIMIT ?2"
        ))
        .bind(fts_query)
        .bind(i64::from(limit.clamp(1, MAX_HITS)))
        .fetch_all(&self.reader)
        .await?;
        rows.iter()
            .map(|row| {
                let role: String = row.try_get("role")?;
                let snippet: String = row.try_get("snippet")?;
                Ok(SearchHit {
                    conversation_id: ConversationId(row.try_get("conversation_id")?),
                    conversation_title: row.try_get("title")?,
                    message_id: MessageId(row.try_get("id")?),
                    role: role.parse()?,
                    created_at: row.try_get("created_at")?,
                    snippet: split_snippet(&snippet),
                })
            })
            .collect()
    }
}

/// The FTS5 query for what a person typed, or `None` if it has no searchable word.
pub(crate) fn fts_query(query: &str) -> Option<String> {
    let words = words(query);
    let last = words.len().checked_sub(1)?;
    let mut out = String::new();
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&quoted(word));
        // Still typing this word: match it as a prefix. Not after punctuation ("c++" is not "c*").
        if i == last && !query.ends_with(char::is_whitespace) && word.ends_with(char::is_alphanumeric) {
            out.push_str(" *");
        }
    }
    Some(out)
}

/// The FTS5 query matching passages with any word of a question (ranked by bm25, which weighs
/// rare words over common ones), or `None` if it has no searchable word. Each word is quoted, as
/// in [`fts_query`]: nothing a person types is FTS5 syntax.
pub(crate) fn fts_any_word(question: &str) -> Option<String> {
    let words = words(question);
    (!words.is_empty()).then(|| words.iter().map(|w| quoted(w)).collect::<Vec<_>>().join(" OR "))
}

/// The searchable words of what a person typed: split at whitespace, each with a letter or digit.
fn words(query: &str) -> Vec<&str> {
    // FTS5 reads its query as a C string: a NUL would end it inside a quoted word.
    query.split(|c: char| c.is_whitespace() || c == '\0').filter(|w| w.chars().any(char::is_alphanumeric)).collect()
}

/// A word as an FTS5 string: in double quotes, its own quotes doubled.
fn quoted(word: &str) -> String {
    format!("\"{}\"", word.replace('"', "\"\""))
}

fn split_snippet(snippet: &str) -> Vec<SnippetPart> {
    let mut parts = Vec::new();
    let mut highlight = false;
    for piece in snippet.split([OPEN, CLOSE]) {
        if !piece.is_empty() {
            parts.push(SnippetPart { text: piece.to_owned(), highlight });
        }
        highlight = !highlight;
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::{fts_any_word, fts_query, split_snippet, SnippetPart};

    #[test]
    fn queries_are_quoted_words() {
        assert_eq!(fts_query("hello world").as_deref(), Some(r#""hello" "world" *"#));
        assert_eq!(fts_query("hello ").as_deref(), Some(r#""hello""#));
        assert_eq!(fts_query("c++").as_deref(), Some(r#""c++""#));
        assert_eq!(fts_query("\"unbalanced").as_deref(), Some(r#""""unbalanced" *"#));
        assert_eq!(fts_query("-x").as_deref(), Some(r#""-x" *"#));
        assert_eq!(fts_query("a:b").as_deref(), Some(r#""a:b" *"#));
        assert_eq!(fts_query("   "), None);
        assert_eq!(fts_query("- \" : *"), None);
        assert_eq!(fts_query("a\0b").as_deref(), Some(r#""a" "b" *"#));
    }

    #[test]
    fn questions_are_any_of_their_quoted_words() {
        assert_eq!(fts_any_word("who (AND) \"said\" x*?").as_deref(), Some(r#""who" OR "(AND)" OR """said""" OR "x*?""#));
        assert_eq!(fts_any_word("NEAR(a b) OR"), Some(r#""NEAR(a" OR "b)" OR "OR""#.to_string()));
        assert_eq!(fts_any_word(" ?! "), None);
    }

    #[test]
    fn snippets_split_on_markers() {
        let parts = split_snippet("a \u{E000}b\u{E001} c");
        assert_eq!(
            parts,
            vec![
                SnippetPart { text: "a ".into(), highlight: false },
                SnippetPart { text: "b".into(), highlight: true },
                SnippetPart { text: " c".into(), highlight: false },
            ]
        );
    }
}
