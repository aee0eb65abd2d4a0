//! Kill during write: a child process (this test binary, re-run in "writer" mode) writes to
//! the store in a loop and is killed with SIGKILL at a random moment. The store must then open
//! cleanly, pass every integrity check, and keep the partial reply, marked `interrupted` by
//! `recover_interrupted`.
#![cfg(unix)]

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use confab_store::{AttachmentMeta, MessageId, MessageStatus, NewConversation, ReplyEnd, ReplyStats, Role, Store};

use crate::assert_healthy;

const CHILD_ENV: &str = "CONFAB_STORE_KILL_CHILD";
const ROUNDS: usize = 6;

/// The child's side. As a normal test it does nothing; with `CONFAB_STORE_KILL_CHILD` set to
/// `stream:<db>` or `mixed:<db>` it writes until killed.
#[tokio::test]
async fn writer_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let (mode, path) = spec.split_once(':').expect("mode:path");
    let store = Store::open(path).await.unwrap();
    match mode {
        "stream" => stream_forever(&store).await,
        "mixed" => mixed_forever(&store).await,
        other => panic!("unknown child mode {other}"),
    }
}

/// Delta `i` of every reply the child writes, so that any prefix can be recognised.
fn delta(i: usize) -> String {
    format!("w{i} ")
}

/// A reply's text is exactly deltas 0..k for some k: nothing torn, lost in the middle or doubled.
fn assert_well_formed(content: &str) -> usize {
    let mut expected = String::new();
    let mut k = 0;
    while expected.len() < content.len() {
        expected.push_str(&delta(k));
        k += 1;
    }
    assert_eq!(content, expected, "a reply's text is not a clean prefix of what was appended");
    k
}

async fn stream_forever(store: &Store) -> ! {
    let c = store.create_conversation(NewConversation { title: "stream".into(), ..Default::default() }).await.unwrap();
    let q = store.add_message(c.id, None, Role::User, "go on forever").await.unwrap();
    let reply = store.start_reply(c.id, q).await.unwrap();
    store.append_reply(reply, &delta(0)).await.unwrap();
    println!("STREAMING {}", reply.0);
    for i in 1.. {
        store.append_reply(reply, &delta(i)).await.unwrap();
    }
    unreachable!()
}

async fn mixed_forever(store: &Store) -> ! {
    let new = || NewConversation { title: "mixed".into(), ..Default::default() };
    let mut c = store.create_conversation(new()).await.unwrap().id;
    let mut parent = store.add_message(c, None, Role::User, "question").await.unwrap();
    println!("STREAMING 0");
    for round in 0usize.. {
        let reply = store.start_reply(c, parent).await.unwrap();
        for i in 0..=(round % 40) {
            store.append_reply(reply, &delta(i)).await.unwrap();
        }
        let end = match round % 3 {
            0 => ReplyEnd::Complete,
            1 => ReplyEnd::Stopped,
            _ => ReplyEnd::Error("failed".into()),
        };
        let stats = ReplyStats { generated_tokens: 1 + (round % 40) as u32, model: "m".into(), ..Default::default() };
        store.finish_reply(reply, end, Some(&stats)).await.unwrap();
        let meta = AttachmentMeta { mime: "image/png".into(), ..Default::default() };
        let image = store.add_attachment_bytes(format!("image {}", round % 7).into_bytes(), &meta).await.unwrap();
        parent = store.add_message_with_attachments(c, Some(reply), Role::User, &format!("question {round}"), &[image]).await.unwrap();
        if round % 20 == 19 {
            let old = c;
            c = store.create_conversation(new()).await.unwrap().id;
            parent = store.add_message(c, None, Role::User, "question").await.unwrap();
            store.delete_conversation(old).await.unwrap();
        }
    }
    unreachable!()
}

/// Starts the child and waits for its "STREAMING <id>" line.
fn start_child(mode: &str, db: &Path) -> (Child, MessageId) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["kill::writer_child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, format!("{mode}:{}", db.display()))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (lines, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    loop {
        match received.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => {
                // libtest prints "test kill::writer_child ... " before the child's own output.
                if let Some((_, id)) = line.split_once("STREAMING ") {
                    return (child, MessageId(id.trim().parse().unwrap()));
                }
            }
            Err(error) => {
                let _ = child.kill();
                panic!("the writer child never started streaming ({error}): {:?}", child.wait());
            }
        }
    }
}

fn kill_at_random(mut child: Child) {
    let wait = fastrand::u64(5..250);
    std::thread::sleep(Duration::from_millis(wait));
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(9), "the child ended before it was killed: {status:?}");
    println!("killed after {wait} ms");
}

#[tokio::test]
async fn killed_mid_stream_the_partial_reply_survives() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.sqlite");
    for round in 0..ROUNDS {
        let (child, reply) = start_child("stream", &db);
        kill_at_random(child);

        let store = Store::open(&db).await.unwrap();
        assert_healthy(&store).await;
        let partial = store.message(reply).await.unwrap();
        assert_eq!(partial.status, MessageStatus::Streaming);
        let deltas = assert_well_formed(&partial.content);
        assert!(deltas >= 1);
        println!("round {round}: reply {reply} had {deltas} deltas");

        assert_eq!(store.recover_interrupted().await.unwrap(), vec![reply]);
        let recovered = store.message(reply).await.unwrap();
        assert_eq!(recovered.status, MessageStatus::Interrupted);
        assert_eq!(recovered.content, partial.content);
        assert_healthy(&store).await;
        store.close().await;
    }
}

#[tokio::test]
async fn killed_during_any_write_the_store_stays_consistent() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.sqlite");
    for _ in 0..ROUNDS {
        let (child, _) = start_child("mixed", &db);
        kill_at_random(child);

        let store = Store::open(&db).await.unwrap();
        assert_healthy(&store).await;
        let recovered = store.recover_interrupted().await.unwrap();
        assert!(recovered.len() <= 1, "{recovered:?}");
        assert_healthy(&store).await;

        // Every reply is a clean prefix; every attachment row has its complete file.
        let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", db.display())).await.unwrap();
        let replies: Vec<(String, String)> =
            sqlx::query_as("SELECT content, status FROM messages WHERE role = 'assistant'").fetch_all(&pool).await.unwrap();
        assert!(replies.iter().all(|(_, status)| status != "streaming"));
        for (content, _) in &replies {
            assert_well_formed(content);
        }
        let hashes: Vec<String> = sqlx::query_scalar("SELECT hash FROM attachments").fetch_all(&pool).await.unwrap();
        for hash in hashes {
            let hash = confab_store::AttachmentHash::parse(&hash).unwrap();
            let bytes = std::fs::read(store.attachment_path(&hash).await.unwrap()).unwrap();
            assert!(bytes.starts_with(b"image "), "attachment {hash} holds {bytes:?}");
        }
        pool.close().await;
        println!("{} replies, {} recovered", replies.len(), recovered.len());
        store.close().await;
    }
}
