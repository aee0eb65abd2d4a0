//! What can go wrong talking to a provider, each with a message that says what to do. The API key
//! never appears in any of them.

use std::error::Error as StdError;
use std::time::Duration;

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Error)]
pub enum RemoteError {
    #[error("The provider's base URL `{url}` is not valid ({reason}). Use the server's address, such as http://192.168.1.20:8000/v1.")]
    BadUrl { url: String, reason: String },

    #[error("Could not reach {server}: {detail}. Check that the server is running, that the address and port are right, and that this machine can reach it.")]
    Unreachable { server: String, detail: String },

    #[error("The secure connection to {server} failed: {detail}. If the server speaks plain HTTP, use an http:// URL; if it has a self-signed certificate, trust that certificate in the system first.")]
    Tls { server: String, detail: String },

    #[error("{server} did not answer for {} s. The server may be overloaded or stuck; try again, or check its logs.", .waited.as_secs())]
    TimedOut { server: String, waited: Duration },

    #[error("{server} refused the API key (HTTP {status}): {message}. Check the API key set for this provider.")]
    Unauthorized { server: String, status: u16, message: String },

    #[error("{server} is limiting requests (HTTP 429){}: {message}", retry_hint(.retry_after))]
    RateLimited { server: String, retry_after: Option<Duration>, message: String },

    #[error("{server} failed with a server error (HTTP {status}): {message}. Try again later; if it persists, check the server's logs.")]
    Server { server: String, status: u16, message: String },

    #[error("{server} rejected the request (HTTP {status}): {message}")]
    Rejected { server: String, status: u16, message: String },

    #[error("The connection to {server} closed before the reply was finished ({detail}). The text received so far is kept.")]
    Interrupted { server: String, detail: String },

    #[error("{server} sent something that is not an OpenAI-compatible answer ({detail}). Check that the base URL points at the API (it usually ends in /v1).")]
    Malformed { server: String, detail: String },

    #[error("{server} reported an error during the reply: {message}. The text received so far is kept.")]
    InStream { server: String, message: String },
}

fn retry_hint(retry_after: &Option<Duration>) -> String {
    match retry_after {
        Some(wait) => format!("; try again in {} s", wait.as_secs().max(1)),
        None => "; wait a little and try again".into(),
    }
}

impl RemoteError {
    /// True when the reply's text so far stays valid: the stream ended early or broke.
    pub fn keeps_partial_reply(&self) -> bool {
        matches!(self, RemoteError::Interrupted { .. } | RemoteError::Malformed { .. } | RemoteError::InStream { .. })
    }

    /// A transport failure (before or during a request) in words, by what went wrong.
    pub(crate) fn from_transport(server: &str, error: &reqwest::Error, waited: Duration) -> RemoteError {
        let server = server.to_string();
        if is_tls(error) {
            return RemoteError::Tls { server, detail: innermost(error) };
        }
        if error.is_timeout() {
            return RemoteError::TimedOut { server, waited };
        }
        RemoteError::Unreachable { server, detail: innermost(error) }
    }

    /// An answer with an error status, from its status, headers and body.
    pub(crate) fn from_status(server: &str, status: u16, retry_after: Option<Duration>, body: &str) -> RemoteError {
        let server = server.to_string();
        let message = body_message(body).unwrap_or_else(|| format!("no explanation given (HTTP {status})"));
        match status {
            401 | 403 => RemoteError::Unauthorized { server, status, message },
            429 => RemoteError::RateLimited { server, retry_after, message },
            500..=599 => RemoteError::Server { server, status, message },
            _ => RemoteError::Rejected { server, status, message },
        }
    }
}

/// The longest message shown from a server's body: enough to explain, not a page of HTML.
const MESSAGE_LIMIT: usize = 300;

/// The explanation in an error body: OpenAI's `{"error": {"message"}}`, the other shapes
/// compatible servers use (`{"error": "..."}`, `{"detail": ...}`, `{"message"}`), or the text.
pub(crate) fn body_message(body: &str) -> Option<String> {
    let body = body.trim();
    if body.is_empty() {
        return None;
    }
    let text = match serde_json::from_str::<serde_json::Value>(body) {
        Ok(json) => {
            let candidates = [&json["error"]["message"], &json["error"], &json["detail"], &json["message"]];
            match candidates.into_iter().find(|v| !v.is_null()) {
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => body.to_string(),
            }
        }
        Err(_) => body.to_string(),
    };
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    Some(match text.char_indices().nth(MESSAGE_LIMIT) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    })
}

/// `Retry-After`: seconds, or an HTTP date.
pub(crate) fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(std::time::SystemTime::now()).unwrap_or(Duration::ZERO))
}

/// The errors below `error`, outermost first. `io::Error` hides the error it wraps from
/// `source()`, so it is opened by hand.
fn chain<'a>(error: &'a (dyn StdError + 'static)) -> Vec<&'a (dyn StdError + 'static)> {
    let mut found = Vec::new();
    let mut next = Some(error);
    while let Some(e) = next {
        found.push(e);
        next = match e.downcast_ref::<std::io::Error>().and_then(|io| io.get_ref()) {
            Some(inner) => Some(inner as &(dyn StdError + 'static)),
            None => e.source(),
        };
    }
    found
}

fn is_tls(error: &reqwest::Error) -> bool {
    chain(error).iter().any(|e| e.is::<rustls::Error>())
}

/// The most specific cause, such as "Connection refused (os error 111)".
fn innermost(error: &reqwest::Error) -> String {
    let links = chain(error);
    links.last().map_or_else(|| error.to_string(), |e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_messages_come_from_every_common_shape() {
        assert_eq!(body_message(r#"{"error":{"message":"bad key","type":"x"}}"#).unwrap(), "bad key");
        assert_eq!(body_message(r#"{"error":"model not found"}"#).unwrap(), "model not found");
        assert_eq!(body_message(r#"{"detail":"Not Found"}"#).unwrap(), "Not Found");
        assert_eq!(body_message("upstream\n  connect error").unwrap(), "upstream connect error");
        assert_eq!(body_message("  "), None);
        assert!(body_message(&"x".repeat(1000)).unwrap().chars().count() <= MESSAGE_LIMIT + 1);
    }

    #[test]
    fn retry_after_takes_seconds_and_dates() {
        assert_eq!(parse_retry_after("7"), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), Some(Duration::ZERO), "a past date: now");
        assert_eq!(parse_retry_after("soon"), None);
    }

    #[test]
    fn statuses_become_the_error_that_says_what_to_do() {
        let e = RemoteError::from_status("http://h:1", 429, Some(Duration::from_secs(3)), r#"{"error":{"message":"slow down"}}"#);
        assert_eq!(e.to_string(), "http://h:1 is limiting requests (HTTP 429); try again in 3 s: slow down");
        assert!(matches!(RemoteError::from_status("s", 401, None, ""), RemoteError::Unauthorized { status: 401, .. }));
        assert!(matches!(RemoteError::from_status("s", 503, None, ""), RemoteError::Server { status: 503, .. }));
        assert!(matches!(RemoteError::from_status("s", 404, None, ""), RemoteError::Rejected { status: 404, .. }));
    }
}
