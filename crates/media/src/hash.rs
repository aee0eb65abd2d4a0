//! A media file's identity: the SHA-256 of its bytes, lowercase hex. The store names
//! attachments by the same hash, and the prefix and encoder caches key on it.

use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::error::{MediaError, MediaProblem, Result};

pub fn content_hash(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The hash of a file, read in chunks (no limit on its size).
pub fn hash_file(path: &Path) -> Result<String> {
    let unreadable = |e: std::io::Error| MediaError::media(super::display_name(path), MediaProblem::Unreadable { detail: e.to_string() });
    let mut file = std::fs::File::open(path).map_err(unreadable)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 16];
    loop {
        match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buffer[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(unreadable(e)),
        }
    }
    Ok(hex(&hasher.finalize()))
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests() {
        assert_eq!(content_hash(b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(content_hash(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
