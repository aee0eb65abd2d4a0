use confab_store::{ConversationId, MessageId, NewConversation, Role, StoreError};

use crate::{assert_healthy, conversation, store};

#[tokio::test]
async fn create_get_rename_and_update() {
    let (store, _dir) = store().await;
    let created = store
        .create_conversation(NewConversation {
            title: "Trip".into(),
            model: Some("smollm2-135m".into()),
            system_prompt: Some("Be brief.".into()),
            thinking: None,
        })
        .await
        .unwrap();
    assert_eq!(created.title, "Trip");
    assert_eq!(created.created_at, created.updated_at);
    assert_eq!(created.current_leaf, None);
    assert_eq!(store.conversation(created.id).await.unwrap(), created);

    store.rename_conversation(created.id, "Trip to Lyon").await.unwrap();
    store.set_conversation_model(created.id, Some("qwen3-0.6b")).await.unwrap();
    store.set_system_prompt(created.id, None).await.unwrap();
    let got = store.conversation(created.id).await.unwrap();
    assert_eq!(got.title, "Trip to Lyon");
    assert_eq!(got.model.as_deref(), Some("qwen3-0.6b"));
    assert_eq!(got.system_prompt, None);
    assert!(got.updated_at >= created.updated_at);
}

#[tokio::test]
async fn unknown_ids_are_not_found() {
    let (store, _dir) = store().await;
    let missing = ConversationId(404);
    let not_found = |e: StoreError| matches!(e, StoreError::NotFound { .. });
    assert!(not_found(store.conversation(missing).await.unwrap_err()));
    assert!(not_found(store.rename_conversation(missing, "x").await.unwrap_err()));
    assert!(not_found(store.delete_conversation(missing).await.unwrap_err()));
    assert!(not_found(store.set_current_leaf(missing, MessageId(1)).await.unwrap_err()));
    let message = store.conversation(missing).await.unwrap_err().to_string();
    assert_eq!(message, "conversation 404 does not exist (it may have been deleted)");
}

#[tokio::test]
async fn list_is_most_recently_updated_first_and_pages() {
    let (store, _dir) = store().await;
    let mut ids = Vec::new();
    for i in 0..7 {
        ids.push(conversation(&store, &format!("c{i}")).await.id);
    }
    // Activity moves a conversation to the top (a millisecond later than the creations).
    std::thread::sleep(std::time::Duration::from_millis(2));
    store.add_message(ids[2], None, Role::User, "hi").await.unwrap();

    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = store.list_conversations(3, cursor).await.unwrap();
        assert!(page.conversations.len() <= 3);
        seen.extend(page.conversations.iter().map(|c| c.id));
        match page.next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(seen[0], ids[2]);
    let mut rest: Vec<_> = ids.iter().rev().copied().filter(|&id| id != ids[2]).collect();
    rest.insert(0, ids[2]);
    assert_eq!(seen, rest);
    // A limit of 0 is read as 1, not as an error.
    assert_eq!(store.list_conversations(0, None).await.unwrap().conversations.len(), 1);
}

#[tokio::test]
async fn pages_split_ties_in_updated_at_by_id() {
    let (store, _dir) = store().await;
    let mut ids = Vec::new();
    for i in 0..9 {
        ids.push(conversation(&store, &format!("c{i}")).await.id);
    }
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", store.path().display())).await.unwrap();
    sqlx::query("UPDATE conversations SET updated_at = CASE WHEN id % 3 = 0 THEN 7 ELSE 5 END").execute(&pool).await.unwrap();
    pool.close().await;
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = store.list_conversations(2, cursor).await.unwrap();
        seen.extend(page.conversations.iter().map(|c| (c.updated_at, c.id.0)));
        match page.next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    let mut expected: Vec<(i64, i64)> = ids.iter().map(|id| (if id.0 % 3 == 0 { 7 } else { 5 }, id.0)).collect();
    expected.sort_by(|a, b| b.cmp(a));
    assert_eq!(seen, expected);
}

#[tokio::test]
async fn set_current_leaf_refuses_a_message_of_another_conversation() {
    let (store, _dir) = store().await;
    let a = conversation(&store, "a").await.id;
    let b = conversation(&store, "b").await.id;
    let in_b = store.add_message(b, None, Role::User, "b's").await.unwrap();
    let error = store.set_current_leaf(a, in_b).await.unwrap_err();
    assert!(matches!(error, StoreError::NotFound { .. }), "{error:?}");
    assert_eq!(store.conversation(a).await.unwrap().current_leaf, None);
}

#[tokio::test]
async fn delete_cascades_to_messages_and_search() {
    let (store, _dir) = store().await;
    let keep = conversation(&store, "keep").await.id;
    let gone = conversation(&store, "gone").await.id;
    let kept = store.add_message(keep, None, Role::User, "zebra in keep").await.unwrap();
    let q = store.add_message(gone, None, Role::User, "zebra in gone").await.unwrap();
    let reply = store.start_reply(gone, q).await.unwrap();
    store.append_reply(reply, "half a zebra").await.unwrap(); // still streaming: chunks exist
    assert_eq!(store.search("zebra", 10).await.unwrap().len(), 2);

    store.delete_conversation(gone).await.unwrap();
    assert!(matches!(store.conversation(gone).await, Err(StoreError::NotFound { .. })));
    assert!(matches!(store.message(q).await, Err(StoreError::NotFound { .. })));
    assert!(matches!(store.message(reply).await, Err(StoreError::NotFound { .. })));
    let hits = store.search("zebra", 10).await.unwrap();
    assert_eq!(hits.iter().map(|h| h.message_id).collect::<Vec<_>>(), vec![kept]);
    assert_eq!(store.list_conversations(10, None).await.unwrap().conversations.len(), 1);
    assert_healthy(&store).await;
}

#[tokio::test]
async fn deleting_a_very_deep_conversation_works() {
    // A chain deeper than SQLite's trigger depth limit (1000), which cascading along parent_id
    // would hit.
    let (store, _dir) = store().await;
    let c = conversation(&store, "long").await.id;
    let mut parent = None;
    for i in 0..1500 {
        let role = if i % 2 == 0 { Role::User } else { Role::Assistant };
        parent = Some(store.add_message(c, parent, role, &format!("turn {i}")).await.unwrap());
    }
    assert_eq!(store.current_branch(c).await.unwrap().len(), 1500);
    store.delete_conversation(c).await.unwrap();
    assert!(store.search("turn", 10).await.unwrap().is_empty());
    assert_healthy(&store).await;
}

#[tokio::test]
async fn a_chat_keeps_its_own_system_prompt_across_a_reopen_until_cleared() {
    let (store, dir) = store().await;
    let chat = conversation(&store, "French").await;
    let other = conversation(&store, "Other").await;
    assert_eq!(chat.system_prompt, None, "a new chat uses the one in Settings");
    store.set_system_prompt(chat.id, Some("Answer in French.")).await.unwrap();
    store.close().await;

    let store = confab_store::Store::open(dir.path().join("history.sqlite")).await.unwrap();
    assert_eq!(store.conversation(chat.id).await.unwrap().system_prompt.as_deref(), Some("Answer in French."));
    assert_eq!(store.conversation(other.id).await.unwrap().system_prompt, None, "only that chat has it");
    store.set_system_prompt(chat.id, None).await.unwrap();
    assert_eq!(store.conversation(chat.id).await.unwrap().system_prompt, None);
    assert_healthy(&store).await;
}

#[tokio::test]
async fn a_chat_s_thinking_switch_is_on_by_default_and_kept_per_chat() {
    let (store, dir) = store().await;
    let chat = conversation(&store, "Quick").await;
    let other = conversation(&store, "Other").await;
    assert!(chat.thinking, "a new chat thinks, as the templates' default does");
    store.set_thinking(chat.id, false).await.unwrap();
    let off =
        store.create_conversation(NewConversation { title: "Off".into(), thinking: Some(false), ..Default::default() }).await.unwrap();
    assert!(!off.thinking);
    store.close().await;

    let store = confab_store::Store::open(dir.path().join("history.sqlite")).await.unwrap();
    assert!(!store.conversation(chat.id).await.unwrap().thinking);
    assert!(store.conversation(other.id).await.unwrap().thinking, "only that chat has it off");
    assert!(matches!(store.set_thinking(ConversationId(999), true).await, Err(StoreError::NotFound { .. })));
    assert_healthy(&store).await;
}
