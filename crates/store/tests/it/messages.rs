use confab_store::{Message, MessageId, MessageStatus, Role, StoreError};

use crate::{assert_healthy, conversation, store};

fn texts(messages: &[Message]) -> Vec<&str> {
    messages.iter().map(|m| m.content.as_str()).collect()
}

#[tokio::test]
async fn messages_chain_and_become_the_current_leaf() {
    let (store, _dir) = store().await;
    let c = conversation(&store, "chat").await.id;
    assert!(store.current_branch(c).await.unwrap().is_empty());
    let q = store.add_message(c, None, Role::User, "What is 2+2?").await.unwrap();
    let a = store.add_message(c, Some(q), Role::Assistant, "4").await.unwrap();

    let message = store.message(a).await.unwrap();
    assert_eq!(message.parent_id, Some(q));
    assert_eq!(message.role, Role::Assistant);
    assert_eq!(message.status, MessageStatus::Complete);
    assert_eq!(message.conversation_id, c);
    assert_eq!(message.stats, None);
    assert_eq!(store.conversation(c).await.unwrap().current_leaf, Some(a));
    assert_eq!(texts(&store.current_branch(c).await.unwrap()), ["What is 2+2?", "4"]);
}

#[tokio::test]
async fn editing_creates_a_sibling_and_branches_switch() {
    let (store, _dir) = store().await;
    let c = conversation(&store, "chat").await.id;
    let q1 = store.add_message(c, None, Role::User, "Name a fruit").await.unwrap();
    let a1 = store.add_message(c, Some(q1), Role::Assistant, "Apple").await.unwrap();
    let q2 = store.add_message(c, Some(a1), Role::User, "Another?").await.unwrap();
    let a2 = store.add_message(c, Some(q2), Role::Assistant, "Banana").await.unwrap();

    // Edit the second question: a sibling of q2, and the new current path.
    let q2b = store.add_message(c, Some(a1), Role::User, "A red one?").await.unwrap();
    let a2b = store.add_message(c, Some(q2b), Role::Assistant, "Cherry").await.unwrap();
    assert_eq!(texts(&store.current_branch(c).await.unwrap()), ["Name a fruit", "Apple", "A red one?", "Cherry"]);
    // The old path is intact.
    assert_eq!(texts(&store.branch(c, a2).await.unwrap()), ["Name a fruit", "Apple", "Another?", "Banana"]);

    // "< 2/2 >" on the edited question.
    let siblings = store.siblings(q2b).await.unwrap();
    assert_eq!(siblings.ids, vec![q2, q2b]);
    assert_eq!((siblings.index, siblings.count()), (1, 2));
    assert_eq!(siblings.previous(), Some(q2));
    assert_eq!(siblings.next(), None);
    assert_eq!(store.siblings(q2).await.unwrap().index, 0);
    let only = store.siblings(a1).await.unwrap();
    assert_eq!((only.index, only.count()), (0, 1));

    // Children of a1 are both questions, oldest first.
    let children = store.children(a1).await.unwrap();
    assert_eq!(children.iter().map(|m| m.id).collect::<Vec<_>>(), vec![q2, q2b]);
    assert!(store.children(a2b).await.unwrap().is_empty());

    // "<": back to the first question; the path follows down to its reply.
    let leaf = store.select_branch(c, q2).await.unwrap();
    assert_eq!(leaf, a2);
    assert_eq!(store.conversation(c).await.unwrap().current_leaf, Some(a2));
    assert_eq!(texts(&store.current_branch(c).await.unwrap())[3], "Banana");

    // Setting the leaf directly works too, also to a message in the middle.
    store.set_current_leaf(c, a2b).await.unwrap();
    assert_eq!(texts(&store.current_branch(c).await.unwrap())[3], "Cherry");
    store.set_current_leaf(c, a1).await.unwrap();
    assert_eq!(texts(&store.current_branch(c).await.unwrap()), ["Name a fruit", "Apple"]);
    assert_healthy(&store).await;
}

#[tokio::test]
async fn editing_the_first_message_makes_sibling_roots() {
    let (store, _dir) = store().await;
    let c = conversation(&store, "chat").await.id;
    let other = conversation(&store, "other").await.id;
    store.add_message(other, None, Role::User, "a root elsewhere").await.unwrap();
    let r1 = store.add_message(c, None, Role::User, "first").await.unwrap();
    let r2 = store.add_message(c, None, Role::User, "first, edited").await.unwrap();
    let siblings = store.siblings(r2).await.unwrap();
    assert_eq!(siblings.ids, vec![r1, r2], "roots of other conversations are not siblings");
    assert_eq!(siblings.index, 1);
    assert_eq!(texts(&store.current_branch(c).await.unwrap()), ["first, edited"]);
}

#[tokio::test]
async fn latest_leaf_follows_the_newest_child() {
    let (store, _dir) = store().await;
    let c = conversation(&store, "chat").await.id;
    let root = store.add_message(c, None, Role::User, "q").await.unwrap();
    let old = store.add_message(c, Some(root), Role::Assistant, "old").await.unwrap();
    let old_follow = store.add_message(c, Some(old), Role::User, "q2").await.unwrap();
    let new = store.add_message(c, Some(root), Role::Assistant, "new").await.unwrap();
    assert_eq!(store.latest_leaf(root).await.unwrap(), new);
    assert_eq!(store.latest_leaf(old).await.unwrap(), old_follow);
    assert_eq!(store.latest_leaf(new).await.unwrap(), new);
}

#[tokio::test]
async fn bad_parents_and_unknown_ids_are_refused() {
    let (store, _dir) = store().await;
    let a = conversation(&store, "a").await.id;
    let b = conversation(&store, "b").await.id;
    let in_a = store.add_message(a, None, Role::User, "x").await.unwrap();

    let error = store.add_message(b, Some(in_a), Role::User, "y").await.unwrap_err();
    assert!(matches!(error, StoreError::InvalidInput(_)), "{error:?}");
    assert!(error.to_string().contains("belongs to conversation"), "{error}");

    let missing = MessageId(999);
    let not_found = |e: StoreError| matches!(e, StoreError::NotFound { .. });
    assert!(not_found(store.add_message(a, Some(missing), Role::User, "y").await.unwrap_err()));
    assert!(not_found(store.add_message(confab_store::ConversationId(77), None, Role::User, "y").await.unwrap_err()));
    assert!(not_found(store.message(missing).await.unwrap_err()));
    assert!(not_found(store.children(missing).await.unwrap_err()));
    assert!(not_found(store.siblings(missing).await.unwrap_err()));
    assert!(not_found(store.latest_leaf(missing).await.unwrap_err()));
    assert!(not_found(store.branch(a, missing).await.unwrap_err()));
    // A real message, asked for in the wrong conversation.
    assert!(not_found(store.branch(b, in_a).await.unwrap_err()));
    // Nothing was written by the refused calls.
    assert_eq!(store.current_branch(b).await.unwrap().len(), 0);
    assert_healthy(&store).await;
}

#[tokio::test]
async fn text_is_stored_exactly() {
    let (store, _dir) = store().await;
    let c = conversation(&store, "chat").await.id;
    let text = "quotes ' \" -- ; DROP TABLE messages; \0 nul, emoji 🦀, RTL שלום, \r\n newlines";
    let id = store.add_message(c, None, Role::System, text).await.unwrap();
    let message = store.message(id).await.unwrap();
    assert_eq!(message.content, text);
    assert_eq!(message.role, Role::System);
}
