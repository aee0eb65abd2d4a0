//! Handing an address to the desktop: a link to the system browser or mail app, a model's folder
//! to the file manager. The platform's own opener (`open` on macOS, `xdg-open` on Linux,
//! `explorer` on Windows) runs directly with the address as its only argument, never through a
//! shell. Only web and mail links pass `checked_link`; the window has asked the person first.

use std::ffi::OsStr;
use std::process::{Command, Stdio};

use tauri::Url;

/// Names a program that takes the place of the platform's opener (the end-to-end tests set it
/// to a script that writes down what it was given, so no browser starts).
const OPENER_ENV: &str = "CONFAB_OPENER";

/// The schemes a link may have to be opened.
const LINK_SCHEMES: &[&str] = &["http", "https", "mailto"];

/// The link as it will be opened, or a message saying why it is not.
pub fn checked_link(address: &str) -> Result<Url, String> {
    let address = address.trim();
    let not_opened = |why: &str| format!("Confab did not open “{address}”: {why}");
    if address.is_empty() {
        return Err("This link has no address, so there is nothing to open.".into());
    }
    if address.chars().any(char::is_control) {
        return Err(not_opened("the address contains control characters."));
    }
    let url = Url::parse(address).map_err(|_| not_opened("it is not a full address (it should start with https://)."))?;
    if !LINK_SCHEMES.contains(&url.scheme()) {
        return Err(not_opened("only web (http, https) and email (mailto) links are opened."));
    }
    let has_target = if url.scheme() == "mailto" { !url.path().is_empty() } else { url.host_str().is_some_and(|h| !h.is_empty()) };
    if !has_target {
        return Err(not_opened("the address names no site or recipient."));
    }
    Ok(url)
}

/// Starts the opener on `target` and returns; the opener's exit is collected in the background.
pub fn open(target: &OsStr) -> Result<(), String> {
    let program = std::env::var_os(OPENER_ENV).unwrap_or_else(|| platform_opener().into());
    let mut child = Command::new(&program)
        .arg(target)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("Could not start {} to open {}: {e}", program.to_string_lossy(), target.to_string_lossy()))?;
    std::thread::spawn(move || match child.wait() {
        Ok(status) if !status.success() => tracing::warn!("the opener exited with {status}"),
        Err(e) => tracing::warn!("could not wait for the opener: {e}"),
        Ok(_) => {}
    });
    Ok(())
}

fn platform_opener() -> &'static str {
    if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn web_and_mail_links_pass() {
        assert_eq!(checked_link("https://example.com/a?b=c#d").unwrap().as_str(), "https://example.com/a?b=c#d");
        assert_eq!(checked_link("  http://example.com ").unwrap().as_str(), "http://example.com/");
        assert_eq!(checked_link("HTTPS://Example.COM").unwrap().as_str(), "https://example.com/");
        assert_eq!(checked_link("mailto:someone@example.com").unwrap().scheme(), "mailto");
    }

    #[test]
    fn other_schemes_and_partial_addresses_are_refused_with_the_reason() {
        for (address, reason) in [
            ("javascript:alert(1)", "only web"),
            ("file:///etc/passwd", "only web"),
            ("ftp://example.com/x", "only web"),
            ("smb://server/share", "only web"),
            ("vscode://open?x", "only web"),
            ("example.com", "not a full address"),
            ("/relative/path", "not a full address"),
            ("-a", "not a full address"),
            ("mailto:", "no site or recipient"),
            ("https://exa\nmple.com", "control characters"),
        ] {
            let message = checked_link(address).unwrap_err();
            assert!(message.contains(reason), "{address}: {message}");
            assert!(message.contains(address.trim()), "{address}: the message shows the address: {message}");
        }
        assert!(checked_link("   ").unwrap_err().contains("no address"));
    }

    #[test]
    fn a_missing_opener_is_an_error_not_a_panic() {
        // The only test that sets the variable; the others never start the opener.
        std::env::set_var(OPENER_ENV, "/nonexistent/confab-opener");
        let message = open(OsStr::new("https://example.com")).unwrap_err();
        std::env::remove_var(OPENER_ENV);
        assert!(message.contains("Could not start /nonexistent/confab-opener"), "{message}");
    }
}
