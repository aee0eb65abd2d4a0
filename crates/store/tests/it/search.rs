use confab_store::{ReplyEnd, Role};

use crate::{assert_healthy, conversation, store};

#[tokio::test]
async fn finds_messages_by_word_with_highlighted_snippets() {
    let (store, _dir) = store().await;
    let trip = conversation(&store, "Trip").await.id;
    let code = conversation(&store, "Code").await.id;
    let q = store.add_message(trip, None, Role::User, "Which museums are open in Lyon on Monday?").await.unwrap();
    let a = store.add_message(trip, Some(q), Role::Assistant, "The Musée des Confluences is open on Mondays.").await.unwrap();
    let c = store.add_message(code, None, Role::User, "How do I write a C++ lambda? Use a:b syntax").await.unwrap();

    let hits = store.search("lyon", 10).await.unwrap();
    assert_eq!(hits.len(), 1);
    let hit = &hits[0];
    assert_eq!((hit.conversation_id, hit.message_id, hit.role), (trip, q, Role::User));
    assert_eq!(hit.conversation_title, "Trip");
    assert!(hit.snippet_text().contains("[Lyon]"), "{}", hit.snippet_text());
    assert!(hit.snippet.iter().any(|p| p.highlight && p.text == "Lyon"));

    // Diacritics are folded, and the last word matches as a prefix while typing.
    assert_eq!(store.search("musee", 10).await.unwrap()[0].message_id, a);
    assert_eq!(store.search("confl", 10).await.unwrap()[0].message_id, a);
    assert!(store.search("confl ", 10).await.unwrap().is_empty(), "a finished word is not a prefix");
    // All words must match.
    assert_eq!(store.search("open lyon", 10).await.unwrap().len(), 1);
    assert_eq!(store.search("open monday", 10).await.unwrap().len(), 2, "monday* matches Mondays");
    assert_eq!(store.search("open", 10).await.unwrap().len(), 2);
    assert_eq!(store.search("lambda", 10).await.unwrap()[0].message_id, c);
    assert_eq!(store.search("a:b", 10).await.unwrap()[0].message_id, c);
    assert_eq!(store.search("open", 1).await.unwrap().len(), 1);
}

#[tokio::test]
async fn odd_queries_never_fail() {
    let (store, _dir) = store().await;
    let chat = conversation(&store, "chat").await.id;
    store.add_message(chat, None, Role::User, "c++ and \"quoted\" text -x a:b NEAR(x) *star* ^caret").await.unwrap();
    for query in [
        "c++",
        "\"unbalanced",
        "-x",
        "a:b",
        "",
        "   ",
        "\"",
        "\"\"",
        "*",
        "x*",
        "^",
        "(",
        ")",
        "NEAR(",
        "NEAR(a b)",
        "AND",
        "OR",
        "NOT",
        "a AND",
        "OR b",
        "NOT c",
        "{a b}",
        "content:x",
        "col : x",
        "+",
        "-",
        "--",
        "'",
        "';--",
        "\\",
        "%",
        "_",
        "🦀",
        "日本語",
        "\u{E000}",
        "a\u{0}b",
        "x -y",
        "\"a\" \"b",
    ] {
        let result = store.search(query, 10).await;
        assert!(result.is_ok(), "query {query:?}: {:?}", result.unwrap_err());
    }
    assert_eq!(store.search("c++", 10).await.unwrap().len(), 1);
    assert_eq!(store.search("\"quoted", 10).await.unwrap().len(), 1);
    assert_eq!(store.search("NEAR(x)", 10).await.unwrap().len(), 1);
    assert!(store.search("-", 10).await.unwrap().is_empty());
}

#[tokio::test]
async fn the_index_follows_replies_and_edits() {
    let (store, _dir) = store().await;
    let chat = conversation(&store, "chat").await.id;
    let q = store.add_message(chat, None, Role::User, "tell me about penguins").await.unwrap();
    let r = store.start_reply(chat, q).await.unwrap();
    store.append_reply(r, "Penguins are flightless ").await.unwrap();
    assert_eq!(store.search("flightless", 10).await.unwrap().len(), 0);
    store.append_reply(r, "birds.").await.unwrap();
    store.finish_reply(r, ReplyEnd::Stopped, None).await.unwrap();
    let hits = store.search("flightless birds", 10).await.unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].message_id, r);
    assert_eq!(hits[0].role, Role::Assistant);
    // Every branch is searchable, not only the current one.
    store.add_message(chat, None, Role::User, "tell me about puffins").await.unwrap();
    assert_eq!(store.search("tell", 10).await.unwrap().len(), 2);
    assert_healthy(&store).await;
}
