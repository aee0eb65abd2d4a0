use confab_store::{
    AttachmentMeta, MessageId, MessageStatus, NewToolCall, ReplyEnd, ReplyText, Role, Store, StoreError, ToolCallStatus, ToolDecision,
    ToolOutcome, ToolResult,
};

use crate::{assert_healthy, conversation, store};

fn call(round: u32, id: &str, tool: &str, arguments: &str) -> NewToolCall {
    NewToolCall { round, call_id: id.into(), server: Some("weather".into()), tool: tool.into(), arguments: arguments.into() }
}

fn answer(text: &str) -> ToolOutcome {
    ToolOutcome::Answered(ToolResult { text: text.into(), images: vec![], is_error: false })
}

/// Runs an allowed call to its answer.
async fn run_call(store: &Store, reply: MessageId, position: u32, text: &str) {
    store.decide_tool_call(reply, position, ToolDecision::AllowedOnce).await.unwrap();
    store.start_tool_call(reply, position).await.unwrap();
    store.finish_tool_call(reply, position, answer(text)).await.unwrap();
}

/// A conversation with a question and a streaming reply to it.
async fn streaming_reply(store: &Store) -> (confab_store::ConversationId, MessageId, MessageId) {
    let c = conversation(store, "tools").await.id;
    let q = store.add_message(c, None, Role::User, "Weather in Zürich and Genève?").await.unwrap();
    let r = store.start_reply(c, q).await.unwrap();
    (c, q, r)
}

#[tokio::test]
async fn calls_record_where_they_came_in_a_reply_of_several_rounds() {
    let (store, _dir) = store().await;
    let (c, _, r) = streaming_reply(&store).await;

    // Round 0: reasoning and answer streamed in chunks (multi-byte characters: offsets are bytes).
    for piece in ["The user wants ", "two cities: Zürich, ", "Genève."] {
        store.append_reply_part(r, ReplyText::Reasoning, piece).await.unwrap();
    }
    for piece in ["Let me look ", "that up… "] {
        store.append_reply(r, piece).await.unwrap();
    }
    let zurich = store.add_tool_call(r, call(0, "call_a", "forecast", r#"{"city":"Zürich"}"#)).await.unwrap();
    let geneva = store.add_tool_call(r, call(0, "call_b", "forecast", r#"{"city":"Genève"}"#)).await.unwrap();
    let reasoning0 = "The user wants two cities: Zürich, Genève.";
    let content0 = "Let me look that up… ";
    assert_eq!((zurich.position, zurich.round, geneva.position), (0, 0, 1));
    assert_eq!((zurich.content_offset, zurich.reasoning_offset), (content0.len() as u64, reasoning0.len() as u64));
    assert_eq!((geneva.content_offset, geneva.reasoning_offset), (zurich.content_offset, zurich.reasoning_offset));
    assert_eq!((zurich.decision, zurich.status, zurich.result.clone()), (ToolDecision::Pending, ToolCallStatus::Awaiting, None));
    assert_eq!(zurich.server.as_deref(), Some("weather"));
    run_call(&store, r, 0, "14 °C, rain").await;
    run_call(&store, r, 1, "17 °C, sun").await;

    // Round 1: more of both parts, then one more call; round 2: the final answer.
    store.append_reply_part(r, ReplyText::Reasoning, " Now the wind.").await.unwrap();
    store.append_reply(r, "Rain in Zürich. ").await.unwrap();
    let wind = store.add_tool_call(r, call(1, "call_c", "wind", "{}")).await.unwrap();
    assert_eq!((wind.position, wind.round), (2, 1));
    assert_eq!(wind.content_offset, (content0.len() + "Rain in Zürich. ".len()) as u64);
    assert_eq!(wind.reasoning_offset, (reasoning0.len() + " Now the wind.".len()) as u64);
    run_call(&store, r, 2, "calm").await;
    store.append_reply(r, "Both calm.").await.unwrap();

    // Mid-stream, the calls come with the message, from `message` and `branch` alike.
    let streaming = store.message(r).await.unwrap();
    assert_eq!(streaming.tool_calls.len(), 3);
    assert_eq!(store.current_branch(c).await.unwrap()[1].tool_calls, streaming.tool_calls);

    store.finish_reply(r, ReplyEnd::Complete, None).await.unwrap();
    let done = store.message(r).await.unwrap();
    assert_eq!(done.content, "Let me look that up… Rain in Zürich. Both calm.");
    // The app's rebuilding of the turns: the text of each round is the slice between offsets.
    let cut = |offset: u64| &done.content[..offset as usize];
    assert_eq!(cut(done.tool_calls[0].content_offset), content0);
    assert_eq!(&done.content[done.tool_calls[1].content_offset as usize..done.tool_calls[2].content_offset as usize], "Rain in Zürich. ");
    let reasoning = done.reasoning.as_deref().unwrap();
    assert_eq!(&reasoning[..done.tool_calls[2].reasoning_offset as usize], "The user wants two cities: Zürich, Genève. Now the wind.");
    let results: Vec<_> = done.tool_calls.iter().map(|t| (t.status, t.result.as_ref().unwrap().text.as_str())).collect();
    assert_eq!(results, [(ToolCallStatus::Done, "14 °C, rain"), (ToolCallStatus::Done, "17 °C, sun"), (ToolCallStatus::Done, "calm")]);
    assert_eq!(store.tool_calls(r).await.unwrap(), done.tool_calls);
    // The question is no assistant's: it has none.
    assert!(store.current_branch(c).await.unwrap()[0].tool_calls.is_empty());
    assert_healthy(&store).await;
}

#[tokio::test]
async fn calls_are_added_only_to_streaming_replies_in_round_order_with_json_arguments() {
    let (store, _dir) = store().await;
    let (_, q, r) = streaming_reply(&store).await;

    let error = store.add_tool_call(r, call(0, "x", "forecast", "{city: Zürich")).await.unwrap_err();
    assert!(matches!(error, StoreError::InvalidInput(_)) && error.to_string().contains("not JSON"), "{error}");
    // Kept as a JSON string, arguments that are not JSON can still be saved.
    let kept = store.add_tool_call(r, call(0, "x", "forecast", &serde_json::to_string("{city: Zürich").unwrap())).await.unwrap();
    assert_eq!(serde_json::from_str::<String>(&kept.arguments).unwrap(), "{city: Zürich");

    store.add_tool_call(r, call(2, "y", "forecast", "{}")).await.unwrap();
    let error = store.add_tool_call(r, call(1, "z", "forecast", "{}")).await.unwrap_err();
    assert!(matches!(error, StoreError::InvalidInput(_)) && error.to_string().contains("round 1 cannot follow"), "{error}");

    let error = store.add_tool_call(q, call(0, "q", "forecast", "{}")).await.unwrap_err();
    assert!(matches!(error, StoreError::NotStreaming { .. }), "a user message takes no calls: {error:?}");
    let error = store.add_tool_call(MessageId(999), call(0, "q", "forecast", "{}")).await.unwrap_err();
    assert!(matches!(error, StoreError::NotFound { .. }), "{error:?}");
    store.finish_reply(r, ReplyEnd::Complete, None).await.unwrap();
    let error = store.add_tool_call(r, call(3, "late", "forecast", "{}")).await.unwrap_err();
    assert!(matches!(error, StoreError::NotStreaming { .. }), "{error:?}");
    assert_eq!(store.tool_calls(r).await.unwrap().len(), 2);
    assert!(matches!(store.tool_calls(MessageId(999)).await.unwrap_err(), StoreError::NotFound { .. }));
    assert!(store.tool_calls(q).await.unwrap().is_empty());
}

#[tokio::test]
async fn decisions_allow_or_deny_and_a_call_runs_only_when_allowed() {
    let (store, _dir) = store().await;
    let (_, _, r) = streaming_reply(&store).await;
    for id in ["a", "b", "c", "d"] {
        store.add_tool_call(r, call(0, id, "forecast", "{}")).await.unwrap();
    }

    let error = store.start_tool_call(r, 0).await.unwrap_err();
    assert!(error.to_string().contains("has not allowed it"), "not before a decision: {error}");
    assert!(store.decide_tool_call(r, 0, ToolDecision::Pending).await.is_err());

    let denied = store.decide_tool_call(r, 0, ToolDecision::Denied).await.unwrap();
    assert_eq!((denied.decision, denied.status), (ToolDecision::Denied, ToolCallStatus::Denied));
    assert!(denied.ended_at.is_some());
    let error = store.decide_tool_call(r, 0, ToolDecision::AllowedOnce).await.unwrap_err();
    assert!(matches!(error, StoreError::InvalidInput(_)) && error.to_string().contains("already decided"), "{error}");
    assert!(store.start_tool_call(r, 0).await.unwrap_err().to_string().contains("it is denied"));

    let always = store.decide_tool_call(r, 1, ToolDecision::AllowedAlways).await.unwrap();
    assert_eq!((always.decision, always.status), (ToolDecision::AllowedAlways, ToolCallStatus::Awaiting));
    let running = store.start_tool_call(r, 1).await.unwrap();
    assert_eq!(running.status, ToolCallStatus::Running);
    assert!(running.started_at.is_some() && running.ended_at.is_none());
    let error = store.start_tool_call(r, 1).await.unwrap_err();
    assert!(error.to_string().contains("it is running, not awaiting"), "{error}");
    let failed = store.finish_tool_call(r, 1, ToolOutcome::Failed("timed out after 30 s".into())).await.unwrap();
    assert_eq!((failed.status, failed.error.as_deref(), failed.result), (ToolCallStatus::Failed, Some("timed out after 30 s"), None));
    assert!(store.finish_tool_call(r, 1, answer("late")).await.is_err(), "a finished call stays finished");

    store.decide_tool_call(r, 2, ToolDecision::Auto).await.unwrap();
    store.start_tool_call(r, 2).await.unwrap();
    let reported = ToolOutcome::Answered(ToolResult { text: "unknown city".into(), images: vec![], is_error: true });
    let done = store.finish_tool_call(r, 2, reported).await.unwrap();
    assert_eq!((done.status, done.result.map(|r| r.is_error)), (ToolCallStatus::Done, Some(true)));

    // Stop while the user is still asked: cancelled without having run.
    let cancelled = store.finish_tool_call(r, 3, ToolOutcome::Cancelled).await.unwrap();
    assert_eq!((cancelled.decision, cancelled.status, cancelled.started_at), (ToolDecision::Pending, ToolCallStatus::Cancelled, None));

    assert!(matches!(
        store.decide_tool_call(r, 9, ToolDecision::Denied).await.unwrap_err(),
        StoreError::NotFound { what: "tool call", .. }
    ));
    assert!(matches!(store.start_tool_call(MessageId(999), 0).await.unwrap_err(), StoreError::NotFound { what: "message", .. }));
}

#[tokio::test]
async fn ending_a_reply_closes_its_live_calls() {
    let (store, _dir) = store().await;
    let (_, q, r) = streaming_reply(&store).await;
    store.add_tool_call(r, call(0, "a", "forecast", "{}")).await.unwrap();
    store.add_tool_call(r, call(0, "b", "forecast", "{}")).await.unwrap();
    run_call(&store, r, 0, "kept").await;
    store.finish_reply(r, ReplyEnd::Stopped, None).await.unwrap();
    let statuses: Vec<_> = store.tool_calls(r).await.unwrap().iter().map(|t| t.status).collect();
    assert_eq!(statuses, [ToolCallStatus::Done, ToolCallStatus::Cancelled]);

    // A provider's stream breaking off interrupts them instead.
    let broken = store.start_reply(store.message(q).await.unwrap().conversation_id, q).await.unwrap();
    let live = store.add_tool_call(broken, call(0, "c", "forecast", "{}")).await.unwrap();
    store.decide_tool_call(broken, live.position, ToolDecision::AllowedOnce).await.unwrap();
    store.start_tool_call(broken, live.position).await.unwrap();
    store.finish_reply(broken, ReplyEnd::Interrupted("connection reset".into()), None).await.unwrap();
    assert_eq!(store.tool_calls(broken).await.unwrap()[0].status, ToolCallStatus::Interrupted);
}

#[tokio::test]
async fn results_keep_their_images_as_attachments_until_no_one_uses_them() {
    let (store, dir) = store().await;
    let (c, _, r) = streaming_reply(&store).await;
    let meta = AttachmentMeta { mime: "image/png".into(), width: Some(2), height: Some(2), ..Default::default() };
    let map = store.add_attachment_bytes(b"map png".to_vec(), &meta).await.unwrap();
    let chart = store.add_attachment_bytes(b"chart png".to_vec(), &meta).await.unwrap();

    store.add_tool_call(r, call(0, "a", "radar", "{}")).await.unwrap();
    store.decide_tool_call(r, 0, ToolDecision::AllowedOnce).await.unwrap();
    store.start_tool_call(r, 0).await.unwrap();
    let unknown = confab_store::AttachmentHash::parse(&"ab".repeat(32)).unwrap();
    let with_unknown = ToolOutcome::Answered(ToolResult { text: "radar".into(), images: vec![unknown], is_error: false });
    let error = store.finish_tool_call(r, 0, with_unknown).await.unwrap_err();
    assert!(matches!(error, StoreError::NotFound { what: "attachment", .. }), "{error:?}");
    let images = vec![map.clone(), chart.clone()];
    let done =
        store.finish_tool_call(r, 0, ToolOutcome::Answered(ToolResult { text: "radar".into(), images, is_error: false })).await.unwrap();
    assert_eq!(done.result.unwrap().images, [map.clone(), chart.clone()]);
    store.finish_reply(r, ReplyEnd::Complete, None).await.unwrap();
    assert_eq!(store.message(r).await.unwrap().tool_calls[0].result.as_ref().unwrap().images, [map.clone(), chart.clone()]);

    // Another conversation shows the chart as a user's attachment.
    let other = conversation(&store, "other").await.id;
    store.add_message_with_attachments(other, None, Role::User, "this chart", std::slice::from_ref(&chart)).await.unwrap();
    let (map_file, chart_file) = (store.attachment_path(&map).await.unwrap(), store.attachment_path(&chart).await.unwrap());

    // Deleting the conversation deletes its calls (cascade) and the map no one else uses.
    store.delete_conversation(c).await.unwrap();
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", dir.path().join("history.sqlite").display())).await.unwrap();
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM tool_calls").fetch_one(&pool).await.unwrap();
    assert_eq!(left, 0);
    assert!(!map_file.exists() && matches!(store.attachment(&map).await.unwrap_err(), StoreError::NotFound { .. }));
    assert!(chart_file.exists(), "the chart is still shown in the other conversation");
    assert_healthy(&store).await;
}

#[tokio::test]
async fn an_image_only_a_tool_result_uses_outlives_the_deleted_conversation_that_shared_it() {
    let (store, _dir) = store().await;
    let meta = AttachmentMeta { mime: "image/png".into(), ..Default::default() };
    let photo = store.add_attachment_bytes(b"photo".to_vec(), &meta).await.unwrap();
    let shared = conversation(&store, "shared").await.id;
    store.add_message_with_attachments(shared, None, Role::User, "look", std::slice::from_ref(&photo)).await.unwrap();
    let (_, _, r) = streaming_reply(&store).await;
    store.add_tool_call(r, call(0, "a", "camera", "{}")).await.unwrap();
    store.decide_tool_call(r, 0, ToolDecision::AllowedOnce).await.unwrap();
    store.start_tool_call(r, 0).await.unwrap();
    let result = ToolResult { text: String::new(), images: vec![photo.clone()], is_error: false };
    store.finish_tool_call(r, 0, ToolOutcome::Answered(result)).await.unwrap();
    store.delete_conversation(shared).await.unwrap();
    assert!(store.attachment_path(&photo).await.unwrap().exists());
    assert_healthy(&store).await;
}

#[tokio::test]
async fn a_kill_during_a_tool_round_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite");
    let store = Store::open(&path).await.unwrap();
    let (c, _, r) = streaming_reply(&store).await;
    store.append_reply(r, "Checking. ").await.unwrap();
    for id in ["done", "running", "asked"] {
        store.add_tool_call(r, call(0, id, "forecast", "{}")).await.unwrap();
    }
    run_call(&store, r, 0, "14 °C").await;
    store.decide_tool_call(r, 1, ToolDecision::AllowedOnce).await.unwrap();
    store.start_tool_call(r, 1).await.unwrap();
    // The process dies here: nothing is finished; every call above was committed.
    drop(store);

    let store = Store::open(&path).await.unwrap();
    assert_eq!(store.recover_interrupted().await.unwrap(), [r]);
    let reply = store.message(r).await.unwrap();
    assert_eq!((reply.status, reply.content.as_str()), (MessageStatus::Interrupted, "Checking. "));
    let calls: Vec<_> =
        reply.tool_calls.iter().map(|t| (t.call_id.as_str(), t.status, t.result.as_ref().map(|r| r.text.as_str()))).collect();
    assert_eq!(
        calls,
        [
            ("done", ToolCallStatus::Done, Some("14 °C")),
            ("running", ToolCallStatus::Interrupted, None),
            ("asked", ToolCallStatus::Interrupted, None)
        ]
    );
    assert!(reply.tool_calls[1].ended_at.is_some());
    assert_healthy(&store).await;

    // Continue: the reply streams again and the next round's calls come after the kept text.
    store.resume_reply(r).await.unwrap();
    store.append_reply(r, "Again. ").await.unwrap();
    let again = store.add_tool_call(r, call(1, "again", "forecast", "{}")).await.unwrap();
    assert_eq!((again.position, again.content_offset), (3, "Checking. Again. ".len() as u64));
    assert_eq!(store.current_branch(c).await.unwrap().last().unwrap().tool_calls.len(), 4);
}

#[tokio::test]
async fn a_regenerated_reply_is_a_sibling_with_its_own_calls() {
    let (store, _dir) = store().await;
    let (c, q, first) = streaming_reply(&store).await;
    store.add_tool_call(first, call(0, "a", "forecast", "{}")).await.unwrap();
    store.finish_reply(first, ReplyEnd::Complete, None).await.unwrap();
    let second = store.start_reply(c, q).await.unwrap();
    assert!(store.message(second).await.unwrap().tool_calls.is_empty());
    store.add_tool_call(second, call(0, "b", "wind", "{}")).await.unwrap();
    store.finish_reply(second, ReplyEnd::Complete, None).await.unwrap();

    let siblings = store.siblings(second).await.unwrap();
    assert_eq!((siblings.ids.clone(), siblings.index), (vec![first, second], 1));
    assert_eq!(store.children(q).await.unwrap().iter().map(|m| m.tool_calls[0].tool.as_str()).collect::<Vec<_>>(), ["forecast", "wind"]);
    store.select_branch(c, first).await.unwrap();
    assert_eq!(store.current_branch(c).await.unwrap()[1].tool_calls[0].call_id, "a");
}

#[tokio::test]
async fn a_schema_3_history_is_migrated_with_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite");
    // A history as Confab wrote it before tool calls: the first three migrations, from files.
    let old = dir.path().join("migrations-3");
    std::fs::create_dir(&old).unwrap();
    for name in ["0001_initial.sql", "0002_responses.sql", "0003_reasoning.sql"] {
        std::fs::copy(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations").join(name), old.join(name)).unwrap();
    }
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(&path).create_if_missing(true);
    let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
    sqlx::migrate::Migrator::new(old.as_path()).await.unwrap().run(&pool).await.unwrap();
    for statement in [
        "INSERT INTO conversations (id, title, created_at, updated_at) VALUES (1, 'old chat', 1, 1)",
        "INSERT INTO messages (id, conversation_id, parent_id, role, content, status, created_at)
         VALUES (1, 1, NULL, 'user', 'Hi', 'complete', 1), (2, 1, 1, 'assistant', 'Héllo', 'streaming', 2)",
        "INSERT INTO reply_chunks (message_id, seq, text, part) VALUES (2, 1, ' there', 'content'), (2, 2, 'hmm', 'reasoning')",
        "UPDATE conversations SET current_leaf_id = 2 WHERE id = 1",
    ] {
        sqlx::query(statement).execute(&pool).await.unwrap();
    }
    pool.close().await;

    let store = Store::open(&path).await.unwrap();
    let branch = store.current_branch(confab_store::ConversationId(1)).await.unwrap();
    assert_eq!(branch.iter().map(|m| m.content.as_str()).collect::<Vec<_>>(), ["Hi", "Héllo there"]);
    assert!(branch.iter().all(|m| m.tool_calls.is_empty()));
    let added = store.add_tool_call(MessageId(2), call(0, "a", "forecast", "{}")).await.unwrap();
    assert_eq!((added.content_offset, added.reasoning_offset), ("Héllo there".len() as u64, 3));
    assert_healthy(&store).await;
}
