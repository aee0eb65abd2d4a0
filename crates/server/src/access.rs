//! Who may call the server. A port on 127.0.0.1 is reachable by every web page the user has
//! open, so a request is never trusted for coming from this machine:
//!
//! - its `Host` must name an address the server listens on (loopback names and addresses, the
//!   bound address, names the user adds), which defeats DNS rebinding: a page whose name
//!   re-resolves to 127.0.0.1 still sends its own name;
//! - an `Origin`, which browsers send on every cross-site call, must be allowed (loopback pages,
//!   the app's own, and origins the user adds); clients that are not browsers send none;
//! - JSON endpoints take only `Content-Type: application/json`, so a page cannot post JSON as a
//!   "simple" `text/plain` request that skips the browser's preflight;
//! - preflights are answered, with CORS headers, for allowed origins only;
//! - with a key set, every API call carries it (a key is required to listen beyond loopback,
//!   see `crate::start`).

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::{Request as HttpRequest, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::messages::routes::error_for;
use crate::shared::error::ApiError;
use crate::ServerState;

/// The app window's origins (Tauri on macOS and Linux; on Windows).
const APP_ORIGINS: [&str; 3] = ["tauri://localhost", "http://tauri.localhost", "https://tauri.localhost"];

/// The variables that add allowed host names and origins, comma-separated (`*` matches any run
/// of characters, as in `OLLAMA_ORIGINS`).
const HOSTS_VARIABLE: &str = "CONFAB_ALLOWED_HOSTS";
const ORIGINS_VARIABLE: &str = "CONFAB_ORIGINS";

/// What the server admits, beyond loopback.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AccessRules {
    /// Host names (without port) to accept besides loopback and the bound address; `*` in one
    /// matches anything, so `["*"]` turns the host check off.
    pub hosts: Vec<String>,
    /// Origins (`scheme://host[:port]`) to accept besides loopback pages and the app's own.
    pub origins: Vec<String>,
}

impl AccessRules {
    /// The rules named by `CONFAB_ALLOWED_HOSTS` and `CONFAB_ORIGINS`.
    pub fn from_env() -> Self {
        let list = |name: &str| std::env::var(name).map(|value| split_list(&value)).unwrap_or_default();
        Self { hosts: list(HOSTS_VARIABLE), origins: list(ORIGINS_VARIABLE) }
    }

    /// These rules with `more` added (each list's entries once).
    pub fn with(mut self, more: AccessRules) -> Self {
        for host in more.hosts {
            if !self.hosts.contains(&host) {
                self.hosts.push(host);
            }
        }
        for origin in more.origins {
            if !self.origins.contains(&origin) {
                self.origins.push(origin);
            }
        }
        self
    }
}

/// A comma- or whitespace-separated list, trimmed, without empty entries.
fn split_list(value: &str) -> Vec<String> {
    value.split(|c: char| c == ',' || c.is_whitespace()).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

/// Whether `pattern` can match an origin: `*`, or `scheme://host[:port]` (stars allowed), with
/// no path.
pub fn is_origin_pattern(pattern: &str) -> bool {
    let Some((scheme, authority)) = pattern.trim_end_matches('/').split_once("://") else { return pattern == "*" };
    let scheme_ok = !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.*".contains(c));
    let authority_ok = !authority.is_empty() && !authority.contains(|c: char| c == '/' || c.is_whitespace() || c.is_control());
    scheme_ok && authority_ok
}

/// The rules with the address the server is bound to.
#[derive(Debug)]
pub(crate) struct Access {
    rules: AccessRules,
    bound: IpAddr,
}

impl Access {
    pub(crate) fn new(rules: AccessRules, bound: IpAddr) -> Self {
        let lower = |list: Vec<String>| list.into_iter().map(|s| s.trim_end_matches('/').to_ascii_lowercase()).collect();
        Self { rules: AccessRules { hosts: lower(rules.hosts), origins: lower(rules.origins) }, bound }
    }

    /// Whether a `Host` header's value names this server.
    pub(crate) fn host_allowed(&self, host: &str) -> bool {
        let name = host_name(host).to_ascii_lowercase();
        let name = name.trim_end_matches('.');
        if name == "localhost" || name.ends_with(".localhost") {
            return true;
        }
        // A literal address cannot be re-bound to this machine, so any the server answers on
        // is fine: loopback, the bound one, and all of them when it listens on every interface.
        if let Ok(ip) = name.parse::<IpAddr>() {
            if ip.is_loopback() || ip == self.bound || self.bound.is_unspecified() {
                return true;
            }
        }
        self.rules.hosts.iter().any(|pattern| matches(pattern, name))
    }

    /// Whether a page of `origin` may call the server.
    pub(crate) fn origin_allowed(&self, origin: &str) -> bool {
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        if APP_ORIGINS.contains(&origin.as_str()) {
            return true;
        }
        let loopback_page = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
            .is_some_and(|authority| is_loopback_name(host_name(authority)));
        loopback_page || self.rules.origins.iter().any(|pattern| matches(pattern, &origin))
    }
}

/// The host part of `host[:port]` or `[v6]:port`.
fn host_name(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match authority.rsplit_once(':') {
        // One colon: a port; more: a bare IPv6 address.
        Some((host, _)) if !host.contains(':') => host,
        _ => authority,
    }
}

fn is_loopback_name(name: &str) -> bool {
    name == "localhost" || name.ends_with(".localhost") || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// `pattern` against `text`, where `*` matches any run of characters.
fn matches(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else { return false };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else { return rest.is_empty() };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Host, Origin and preflights, on every path (`/health` and unknown paths too).
pub(crate) async fn check_caller(State(state): State<Arc<ServerState>>, request: HttpRequest, next: Next) -> Response {
    let path = request.uri().path().to_string();
    let headers = request.headers();
    // HTTP/1.1 always has a Host; a client without one is no browser.
    if let Some(host) = headers.get(header::HOST) {
        let host = host.to_str().unwrap_or_default();
        if !state.access.host_allowed(host) {
            return error_for(&path, ApiError::host_not_allowed(host));
        }
    }
    let origin = match headers.get(header::ORIGIN).map(|o| o.to_str().unwrap_or_default().to_string()) {
        Some(origin) if !state.access.origin_allowed(&origin) => {
            return error_for(&path, ApiError::origin_not_allowed(&origin));
        }
        origin => origin,
    };
    let preflight = request.method() == Method::OPTIONS && headers.contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    let mut response = match (&origin, preflight) {
        (Some(_), true) => preflight_answer(headers),
        _ => next.run(request).await,
    };
    if let Some(origin) = origin.and_then(|o| HeaderValue::from_str(&o).ok()) {
        let headers = response.headers_mut();
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        headers.append(header::VARY, HeaderValue::from_static("Origin"));
    }
    response
}

/// An allowed origin's preflight: the methods the API has, and the headers it asked for.
fn preflight_answer(asked: &HeaderMap) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, POST, DELETE, OPTIONS"));
    if let Some(wanted) = asked.get(header::ACCESS_CONTROL_REQUEST_HEADERS) {
        headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, wanted.clone());
    }
    headers.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
    response
}

/// On the API's routes: the key, when one is set, and a JSON content type on what takes a body.
pub(crate) async fn admit(State(state): State<Arc<ServerState>>, request: HttpRequest, next: Next) -> Response {
    let path = request.uri().path().to_string();
    let headers = request.headers();
    if let Some(key) = &state.api_key {
        let bearer = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
        let x_api_key = headers.get("x-api-key").and_then(|v| v.to_str().ok());
        if ![bearer, x_api_key].into_iter().flatten().any(|given| given.trim() == key.as_str()) {
            return error_for(&path, ApiError::unauthorized());
        }
    }
    if request.method() == Method::POST {
        let content_type = headers.get(header::CONTENT_TYPE).map(|v| v.to_str().unwrap_or_default());
        if !content_type.is_some_and(is_json) {
            return error_for(&path, ApiError::not_json(content_type));
        }
    }
    next.run(request).await
}

/// `application/json`, with parameters (`; charset=utf-8`) or as a `+json` type.
fn is_json(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loopback() -> Access {
        Access::new(AccessRules::default(), "127.0.0.1".parse().unwrap())
    }

    #[test]
    fn hosts_that_name_this_server_pass_and_others_do_not() {
        let access = loopback();
        for host in [
            "localhost",
            "localhost:8080",
            "LOCALHOST:1",
            "app.localhost:8080",
            "127.0.0.1:8080",
            "127.0.0.2",
            "[::1]:8080",
            "::1",
            "localhost.",
        ] {
            assert!(access.host_allowed(host), "{host}");
        }
        for host in ["evil.example:8080", "evil.example", "localhost.evil.example", "10.0.0.5:8080", "[fe80::1]:8080", ""] {
            assert!(!access.host_allowed(host), "{host}");
        }
    }

    #[test]
    fn the_bound_address_and_added_names_pass() {
        let access = Access::new(
            AccessRules { hosts: vec!["MyBox.local".into(), "*.lan".into()], origins: vec![] },
            "192.168.1.20".parse().unwrap(),
        );
        for host in ["192.168.1.20:8080", "mybox.local:8080", "studio.lan", "localhost:8080"] {
            assert!(access.host_allowed(host), "{host}");
        }
        for host in ["192.168.1.21:8080", "evil.example", "lan"] {
            assert!(!access.host_allowed(host), "{host}");
        }
        // Listening on every interface: any literal address, still no foreign name.
        let everywhere = Access::new(AccessRules::default(), "0.0.0.0".parse().unwrap());
        assert!(everywhere.host_allowed("10.0.0.5:8080"));
        assert!(!everywhere.host_allowed("evil.example:8080"));
        let anything = Access::new(AccessRules { hosts: vec!["*".into()], origins: vec![] }, "127.0.0.1".parse().unwrap());
        assert!(anything.host_allowed("evil.example:8080"));
    }

    #[test]
    fn loopback_pages_and_the_app_are_allowed_origins_and_others_only_when_added() {
        let access = loopback();
        for origin in [
            "http://localhost:3000",
            "https://localhost",
            "http://127.0.0.1:5173",
            "http://[::1]:8080",
            "tauri://localhost",
            "http://tauri.localhost",
        ] {
            assert!(access.origin_allowed(origin), "{origin}");
        }
        for origin in ["http://evil.example", "https://localhost.evil.example", "null", "file://", "http://10.0.0.5:3000", "tauri://evil"] {
            assert!(!access.origin_allowed(origin), "{origin}");
        }
        let added = Access::new(
            AccessRules { hosts: vec![], origins: vec!["https://chat.example.com".into(), "https://*.tools.example/".into()] },
            "127.0.0.1".parse().unwrap(),
        );
        for origin in ["https://chat.example.com", "https://a.tools.example", "HTTPS://B.TOOLS.EXAMPLE"] {
            assert!(added.origin_allowed(origin), "{origin}");
        }
        for origin in ["http://chat.example.com", "https://chat.example.com.evil", "https://tools.example.evil"] {
            assert!(!added.origin_allowed(origin), "{origin}");
        }
    }

    #[test]
    fn patterns_match_stars_as_any_run() {
        assert!(matches("*", "anything"));
        assert!(matches("a*c", "abbbc"));
        assert!(matches("a*b*c", "a-b-c"));
        assert!(!matches("a*c", "abcd"));
        assert!(!matches("abc", "abcd"));
        assert!(matches("*.lan", "x.lan"));
        assert!(!matches("*.lan", "lan"));
    }

    #[test]
    fn only_json_content_types_are_json() {
        for json in ["application/json", "application/json; charset=utf-8", "Application/JSON", "application/merge-patch+json"] {
            assert!(is_json(json), "{json}");
        }
        for other in ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""]
        {
            assert!(!is_json(other), "{other}");
        }
    }

    #[test]
    fn origin_patterns_are_scheme_and_host_without_a_path() {
        for good in
            ["*", "https://chat.example.com", "http://localhost:3000", "https://*.example.com", "app://x/", "chrome-extension://abc"]
        {
            assert!(is_origin_pattern(good), "{good}");
        }
        for bad in ["chat.example.com", "https://", "https://a.example/path", "https://a b", "", "://x"] {
            assert!(!is_origin_pattern(bad), "{bad}");
        }
    }

    #[test]
    fn lists_split_on_commas_and_spaces() {
        assert_eq!(split_list(" a.example, b.example  c.example,,"), ["a.example", "b.example", "c.example"]);
    }
}
