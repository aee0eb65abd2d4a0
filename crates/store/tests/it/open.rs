use confab_store::{Store, StoreError};

use crate::{assert_healthy, conversation};

#[tokio::test]
async fn creates_the_file_and_its_folders_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b/history.sqlite");
    let store = Store::open(&path).await.unwrap();
    assert!(path.exists());
    assert!(dir.path().join("a/b/attachments/tmp").is_dir());
    assert_eq!(store.path(), path);
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display())).await.unwrap())
        .await
        .unwrap();
    assert_eq!(mode, "wal");
    assert_healthy(&store).await;
}

#[tokio::test]
async fn reopening_keeps_the_data_and_does_not_rerun_migrations() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite");
    let store = Store::open(&path).await.unwrap();
    let id = conversation(&store, "kept").await.id;
    store.close().await;
    let store = Store::open(&path).await.unwrap();
    assert_eq!(store.conversation(id).await.unwrap().title, "kept");
}

#[tokio::test]
async fn a_file_that_is_not_a_database_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite");
    std::fs::write(&path, vec![0x42; 8192]).unwrap();
    let error = Store::open(&path).await.unwrap_err();
    assert!(matches!(error, StoreError::NotADatabase { .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("is not a Confab history database") && message.contains("move it aside"), "{message}");
}

#[tokio::test]
async fn a_database_from_a_newer_confab_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite");
    Store::open(&path).await.unwrap().close().await;
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display())).await.unwrap();
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
         VALUES (9999, 'from the future', 1, x'00', 0)",
    )
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
    let error = Store::open(&path).await.unwrap_err();
    assert!(matches!(error, StoreError::NewerSchema { version: 9999, .. }), "{error:?}");
    assert!(error.to_string().contains("update Confab"), "{error}");
}

#[tokio::test]
async fn a_folder_that_cannot_be_created_is_an_io_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, b"x").unwrap();
    let error = Store::open(blocker.join("history.sqlite")).await.unwrap_err();
    let message = error.to_string();
    assert!(message.contains("could not open the history database"), "{message}");
    assert!(message.contains(&blocker.display().to_string()), "{message}");
}
