//! confab-secrets: where the app's secrets live (providers' API keys, the Hugging Face token, MCP
//! servers' secret values): never in the history database or a log.
//!
//! - macOS: the login Keychain (through the `keyring` crate, Apple's Security framework).
//! - Linux: the Secret Service (GNOME Keyring, KWallet) when the session has one running;
//!   otherwise `secrets.json` in the folder given (the app's data folder), readable and
//!   writable by the user alone (0600).
//!
//! One rule for choosing, in [`SecretStore::open`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// The keychain entries' service name.
const SERVICE: &str = "Confab";
/// The fallback file's name.
pub const SECRETS_FILE: &str = "secrets.json";

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SecretError {
    #[error("The system keychain refused to {action} the key: {detail}. Unlock the keychain (or the login keyring) and try again.")]
    Keychain { action: &'static str, detail: String },
    #[error("Could not {action} the key file {}: {detail}. Check that the folder is writable by you.", .path.display())]
    File { action: &'static str, path: PathBuf, detail: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretStore {
    /// The operating system's store: the macOS Keychain or the Secret Service. Entries are
    /// named after the data folder too, so that two data folders (`CONFAB_HOME`, tests) never
    /// share or overwrite each other's keys.
    System { folder: PathBuf },
    /// A JSON file readable by the user alone.
    File(PathBuf),
}

impl SecretStore {
    /// The system's store where there is one that answers, else the file in `folder`.
    pub fn open(folder: &Path) -> SecretStore {
        if system_store_answers() {
            SecretStore::System { folder: folder.to_path_buf() }
        } else {
            tracing::info!(folder = %folder.display(), "no system keychain answers; provider keys go to a file only you can read");
            SecretStore::file(folder)
        }
    }

    pub fn file(folder: &Path) -> SecretStore {
        SecretStore::File(folder.join(SECRETS_FILE))
    }

    /// Where keys are kept, in words, for Settings and docs/remote.md.
    pub fn describe(&self) -> String {
        match self {
            SecretStore::System { .. } if cfg!(target_os = "macos") => "the macOS Keychain".into(),
            SecretStore::System { .. } => "the Secret Service (the desktop's keyring)".into(),
            SecretStore::File(path) => format!("{} (readable only by you)", path.display()),
        }
    }

    pub fn set(&self, name: &str, secret: &str) -> Result<(), SecretError> {
        match self {
            SecretStore::System { folder } => entry(folder, name)
                .and_then(|e| e.set_password(secret))
                .map_err(|e| SecretError::Keychain { action: "save", detail: e.to_string() }),
            SecretStore::File(path) => {
                let mut all = read_file(path)?;
                all.insert(name.to_string(), secret.to_string());
                write_file(path, &all)
            }
        }
    }

    pub fn get(&self, name: &str) -> Result<Option<String>, SecretError> {
        match self {
            SecretStore::System { folder } => match entry(folder, name).and_then(|e| e.get_password()) {
                Ok(secret) => Ok(Some(secret)),
                Err(keyring::Error::NoEntry) => Ok(None),
                Err(e) => Err(SecretError::Keychain { action: "read", detail: e.to_string() }),
            },
            SecretStore::File(path) => Ok(read_file(path)?.remove(name)),
        }
    }

    pub fn delete(&self, name: &str) -> Result<(), SecretError> {
        match self {
            SecretStore::System { folder } => match entry(folder, name).and_then(|e| e.delete_credential()) {
                Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
                Err(e) => Err(SecretError::Keychain { action: "delete", detail: e.to_string() }),
            },
            SecretStore::File(path) => {
                let mut all = read_file(path)?;
                if all.remove(name).is_some() {
                    write_file(path, &all)?;
                }
                Ok(())
            }
        }
    }
}

/// The account name shown in Keychain Access / Seahorse: `provider:1 (/path/to/data)`.
fn entry(folder: &Path, name: &str) -> keyring::Result<keyring::Entry> {
    keyring::Entry::new(SERVICE, &format!("{name} ({})", folder.display()))
}

/// macOS always has its Keychain. On Linux the Secret Service needs a session bus and a
/// keyring daemon; a lookup that comes back (found or not) shows both are there.
fn system_store_answers() -> bool {
    if cfg!(target_os = "macos") {
        return true;
    }
    if !cfg!(target_os = "linux") || std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none() {
        return false;
    }
    match entry(Path::new("probe"), "confab-probe").and_then(|e| e.get_password()) {
        Ok(_) | Err(keyring::Error::NoEntry) => true,
        Err(e) => {
            tracing::debug!(error = %e, "the Secret Service does not answer");
            false
        }
    }
}

fn read_file(path: &Path) -> Result<BTreeMap<String, String>, SecretError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(SecretError::File { action: "read", path: path.into(), detail: e.to_string() }),
    };
    serde_json::from_str(&text).map_err(|e| SecretError::File {
        action: "read",
        path: path.into(),
        detail: format!("it is damaged ({e}); delete it and enter the providers' keys again"),
    })
}

/// Written whole to a file created 0600, then renamed over the old one: never a moment when
/// the keys are readable by others or half written.
fn write_file(path: &Path, all: &BTreeMap<String, String>) -> Result<(), SecretError> {
    let fail = |detail: String| SecretError::File { action: "write", path: path.into(), detail };
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder).map_err(|e| fail(e.to_string()))?;
    }
    let temporary = path.with_extension("json.tmp");
    let _ = std::fs::remove_file(&temporary);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(&temporary).map_err(|e| fail(e.to_string()))?;
    let written = serde_json::to_writer(&file, all).map_err(|e| e.to_string()).and_then(|()| file.sync_all().map_err(|e| e.to_string()));
    drop(file);
    if let Err(e) = written.and_then(|()| std::fs::rename(&temporary, path).map_err(|e| e.to_string())) {
        let _ = std::fs::remove_file(&temporary);
        return Err(fail(e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_store_keeps_keys_for_the_user_alone() {
        let dir = tempfile::tempdir().unwrap();
        let store = SecretStore::file(dir.path());
        assert_eq!(store.get("provider:1").unwrap(), None);
        store.set("provider:1", "sk-one").unwrap();
        store.set("provider:2", "sk-two").unwrap();
        store.set("provider:1", "sk-uno").unwrap();
        assert_eq!(store.get("provider:1").unwrap().as_deref(), Some("sk-uno"));
        store.delete("provider:2").unwrap();
        store.delete("provider:2").unwrap(); // deleting what is gone is fine
        assert_eq!(store.get("provider:2").unwrap(), None);
        let path = dir.path().join(SECRETS_FILE);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, [SECRETS_FILE], "no temporary file left behind");
        assert!(store.describe().contains("readable only by you"));
    }

    #[test]
    fn a_damaged_file_says_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(SECRETS_FILE), "{not json").unwrap();
        let error = SecretStore::file(dir.path()).get("x").unwrap_err();
        assert!(error.to_string().contains("enter the providers' keys again"), "{error}");
    }

    #[test]
    fn without_a_session_bus_linux_uses_the_file() {
        if cfg!(target_os = "linux") && std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none() {
            let dir = tempfile::tempdir().unwrap();
            assert_eq!(SecretStore::open(dir.path()), SecretStore::file(dir.path()));
        }
    }
}
