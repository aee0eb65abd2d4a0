use confab_store::{AttachmentHash, AttachmentMeta, MessageId, Role, StoreError};

use crate::{assert_healthy, conversation, store};

fn png(name: &str) -> AttachmentMeta {
    AttachmentMeta { mime: "image/png".into(), original_name: Some(name.into()), width: Some(2), height: Some(1), duration_ms: None }
}

/// Files under the attachments folder, tmp/ excluded.
fn stored_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for shard in std::fs::read_dir(dir).unwrap().flatten() {
        if shard.file_name() == "tmp" {
            continue;
        }
        files.extend(std::fs::read_dir(shard.path()).unwrap().flatten().map(|e| e.path()));
    }
    files
}

#[tokio::test]
async fn bytes_are_stored_once_by_content() {
    let (store, _dir) = store().await;
    let bytes = b"not really a png".to_vec();
    let hash = store.add_attachment_bytes(bytes.clone(), &png("a.png")).await.unwrap();
    // sha256("not really a png")
    assert_eq!(hash.as_str().len(), 64);
    let again = store.add_attachment_bytes(bytes.clone(), &png("renamed.png")).await.unwrap();
    assert_eq!(hash, again);

    let path = store.attachment_path(&hash).await.unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    let relative = path.strip_prefix(store.attachments_dir()).unwrap();
    assert_eq!(relative, std::path::Path::new(&hash.as_str()[..2]).join(&hash.as_str()[2..]));
    assert_eq!(stored_files(store.attachments_dir()), vec![path.clone()]);
    assert_eq!(std::fs::read_dir(store.attachments_dir().join("tmp")).unwrap().count(), 0, "temp files left");

    let meta = store.attachment(&hash).await.unwrap();
    assert_eq!(meta.size, bytes.len() as u64);
    assert_eq!(meta.mime, "image/png");
    assert_eq!(meta.original_name.as_deref(), Some("a.png"), "the first metadata is kept");
    assert_eq!((meta.width, meta.height, meta.duration_ms), (Some(2), Some(1), None));
}

#[tokio::test]
async fn files_are_copied_in_and_hash_like_their_bytes() {
    let (store, dir) = store().await;
    let source = dir.path().join("clip.wav");
    let bytes: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&source, &bytes).unwrap();
    let meta = AttachmentMeta { mime: "audio/wav".into(), duration_ms: Some(1500), ..Default::default() };
    let from_file = store.add_attachment_file(&source, &meta).await.unwrap();
    assert!(source.exists(), "the original stays");
    let from_bytes = store.add_attachment_bytes(bytes.clone(), &meta).await.unwrap();
    assert_eq!(from_file, from_bytes);
    assert_eq!(std::fs::read(store.attachment_path(&from_file).await.unwrap()).unwrap(), bytes);
    assert_eq!(store.attachment(&from_file).await.unwrap().duration_ms, Some(1500));

    let error = store.add_attachment_file(dir.path().join("nope.wav"), &meta).await.unwrap_err();
    assert!(matches!(error, StoreError::Io { .. }), "{error:?}");
    assert!(error.to_string().contains("nope.wav"), "{error}");
}

#[tokio::test]
async fn messages_link_attachments_in_order_and_share_them() {
    let (store, _dir) = store().await;
    let c = conversation(&store, "chat").await.id;
    let cat = store.add_attachment_bytes(b"cat".to_vec(), &png("cat.png")).await.unwrap();
    let dog = store.add_attachment_bytes(b"dog".to_vec(), &png("dog.png")).await.unwrap();
    let m1 = store.add_message_with_attachments(c, None, Role::User, "what are these?", &[dog.clone(), cat.clone()]).await.unwrap();
    let a = store.add_message(c, Some(m1), Role::Assistant, "a dog and a cat").await.unwrap();
    let m2 = store.add_message(c, Some(a), Role::User, "and this?").await.unwrap();
    store.attach(m2, std::slice::from_ref(&cat)).await.unwrap();
    store.attach(m2, std::slice::from_ref(&dog)).await.unwrap();

    let hashes = |list: Vec<confab_store::Attachment>| list.into_iter().map(|a| a.hash).collect::<Vec<_>>();
    assert_eq!(hashes(store.message_attachments(m1).await.unwrap()), vec![dog.clone(), cat.clone()]);
    assert_eq!(hashes(store.message_attachments(m2).await.unwrap()), vec![cat.clone(), dog.clone()]);
    assert!(store.message_attachments(a).await.unwrap().is_empty());
    assert_eq!(stored_files(store.attachments_dir()).len(), 2);
    assert_healthy(&store).await;
}

#[tokio::test]
async fn bad_hashes_and_unknown_attachments_are_refused() {
    let (store, _dir) = store().await;
    let c = conversation(&store, "chat").await.id;
    for bad in ["", "abc", "../../etc/passwd", &"g".repeat(64), &"a".repeat(65)] {
        assert!(matches!(AttachmentHash::parse(bad), Err(StoreError::InvalidInput(_))), "{bad:?}");
    }
    assert!(serde_json::from_str::<AttachmentHash>("\"../x\"").is_err());
    let upper = AttachmentHash::parse(&"AB".repeat(32)).unwrap();
    assert_eq!(upper.as_str(), "ab".repeat(32));

    let unknown = AttachmentHash::parse(&"0".repeat(64)).unwrap();
    assert!(matches!(store.attachment(&unknown).await, Err(StoreError::NotFound { .. })));
    assert!(matches!(store.attachment_path(&unknown).await, Err(StoreError::NotFound { .. })));
    let error = store.add_message_with_attachments(c, None, Role::User, "x", std::slice::from_ref(&unknown)).await.unwrap_err();
    assert!(matches!(error, StoreError::NotFound { what: "attachment", .. }), "{error:?}");
    assert!(store.current_branch(c).await.unwrap().is_empty(), "the message was rolled back");
    assert!(matches!(store.attach(MessageId(5), &[]).await, Err(StoreError::NotFound { .. })));
    assert!(matches!(store.message_attachments(MessageId(5)).await, Err(StoreError::NotFound { .. })));

    let no_mime = AttachmentMeta::default();
    assert!(matches!(store.add_attachment_bytes(b"x".to_vec(), &no_mime).await, Err(StoreError::InvalidInput(_))));
}

#[tokio::test]
async fn deleting_a_conversation_keeps_files_other_messages_share() {
    let (store, _dir) = store().await;
    let shared = store.add_attachment_bytes(b"shared".to_vec(), &png("s.png")).await.unwrap();
    let own = store.add_attachment_bytes(b"own".to_vec(), &png("o.png")).await.unwrap();
    let staged = store.add_attachment_bytes(b"staged".to_vec(), &png("t.png")).await.unwrap();
    let keep = conversation(&store, "keep").await.id;
    let gone = conversation(&store, "gone").await.id;
    store.add_message_with_attachments(keep, None, Role::User, "k", std::slice::from_ref(&shared)).await.unwrap();
    store.add_message_with_attachments(gone, None, Role::User, "g", &[shared.clone(), own.clone()]).await.unwrap();
    let shared_path = store.attachment_path(&shared).await.unwrap();
    let own_path = store.attachment_path(&own).await.unwrap();

    store.delete_conversation(gone).await.unwrap();
    assert!(shared_path.exists());
    assert!(store.attachment(&shared).await.is_ok());
    assert!(!own_path.exists(), "a file only the deleted conversation used is removed");
    assert!(matches!(store.attachment(&own).await, Err(StoreError::NotFound { .. })));
    assert!(store.attachment_path(&staged).await.is_ok(), "an attachment not yet sent stays");
    assert_healthy(&store).await;
}

#[tokio::test]
async fn a_missing_file_is_reported_with_its_path() {
    let (store, _dir) = store().await;
    let hash = store.add_attachment_bytes(b"x".to_vec(), &png("x.png")).await.unwrap();
    let path = store.attachment_path(&hash).await.unwrap();
    std::fs::remove_file(&path).unwrap();
    let error = store.attachment_path(&hash).await.unwrap_err();
    assert!(matches!(error, StoreError::Io { .. }), "{error:?}");
    assert!(error.to_string().contains(&hash.as_str()[2..]), "{error}");
    // Adding the bytes again restores the file.
    store.add_attachment_bytes(b"x".to_vec(), &png("x.png")).await.unwrap();
    assert_eq!(std::fs::read(store.attachment_path(&hash).await.unwrap()).unwrap(), b"x");
}
