use confab_store::{MessageStatus, ReplyEnd, ReplyStats, ReplyText, Role, SpeculativeReplyStats, StopReason, StoreError};

use crate::{assert_healthy, conversation, store};

fn stats() -> ReplyStats {
    ReplyStats {
        prompt_tokens: 120,
        cached_tokens: 100,
        generated_tokens: 3,
        time_to_first_token_ms: Some(42),
        decode_tokens_per_second: Some(187.5),
        model: "smollm2-135m-instruct".into(),
        speculative: None,
        steps_per_canvas: vec![],
        stop_reason: None,
    }
}

#[tokio::test]
async fn a_reply_streams_then_completes_with_stats() {
    let (store, _dir) = store().await;
    let c = conversation(&store, "chat").await.id;
    let before = store.conversation(c).await.unwrap().updated_at;
    let q = store.add_message(c, None, Role::User, "Say hello").await.unwrap();
    let r = store.start_reply(c, q).await.unwrap();

    let started = store.message(r).await.unwrap();
    assert_eq!((started.role, started.status, started.content.as_str()), (Role::Assistant, MessageStatus::Streaming, ""));
    assert_eq!(store.conversation(c).await.unwrap().current_leaf, Some(r));

    for delta in ["Hel", "lo", "", ", wor", "ld!"] {
        store.append_reply(r, delta).await.unwrap();
    }
    // Mid-stream the text so far is readable, from both `message` and `branch`.
    assert_eq!(store.message(r).await.unwrap().content, "Hello, world!");
    assert_eq!(store.current_branch(c).await.unwrap()[1].content, "Hello, world!");
    // ... but not searchable until it ends.
    assert!(store.search("world", 5).await.unwrap().is_empty());

    store.finish_reply(r, ReplyEnd::Complete, Some(&stats())).await.unwrap();
    let done = store.message(r).await.unwrap();
    assert_eq!(done.status, MessageStatus::Complete);
    assert_eq!(done.content, "Hello, world!");
    assert_eq!(done.stats, Some(stats()));
    assert_eq!(done.error, None);
    assert!(store.conversation(c).await.unwrap().updated_at >= before);
    assert_eq!(store.search("world", 5).await.unwrap()[0].message_id, r);
    assert_healthy(&store).await;
}

#[tokio::test]
async fn a_speculative_replys_stats_are_kept_with_it() {
    let (store, _dir) = store().await;
    let c = conversation(&store, "chat").await.id;
    let q = store.add_message(c, None, Role::User, "Quote this").await.unwrap();
    let r = store.start_reply(c, q).await.unwrap();
    store.append_reply(r, "Quoted.").await.unwrap();
    let speculative =
        SpeculativeReplyStats { method: "prompt_lookup".into(), proposed: 40, accepted: 30, acceptance_rate: 0.75, tokens_per_step: 4.0 };
    let with = ReplyStats { speculative: Some(speculative), ..stats() };
    store.finish_reply(r, ReplyEnd::Complete, Some(&with)).await.unwrap();
    assert_eq!(store.message(r).await.unwrap().stats, Some(with));
}

#[tokio::test]
async fn a_denoising_replys_steps_per_canvas_are_kept() {
    let (store, _dir) = store().await;
    let c = conversation(&store, "chat").await.id;
    let q = store.add_message(c, None, Role::User, "Tell a story").await.unwrap();
    let r = store.start_reply(c, q).await.unwrap();
    store.append_reply(r, "Once upon a time").await.unwrap();
    let canvases = ReplyStats { steps_per_canvas: vec![14, 12, 16], ..stats() };
    store.finish_reply(r, ReplyEnd::Complete, Some(&canvases)).await.unwrap();
    assert_eq!(store.message(r).await.unwrap().stats, Some(canvases));
    // Other replies have none.
    assert_eq!(store.current_branch(c).await.unwrap()[0].stats, None);
}

#[tokio::test]
async fn stopped_and_failed_replies_keep_their_text() {
    let (store, _dir) = store().await;
    let c = conversation(&store, "chat").await.id;
    let q = store.add_message(c, None, Role::User, "Count").await.unwrap();

    let stopped = store.start_reply(c, q).await.unwrap();
    store.append_reply(stopped, "1 2 3").await.unwrap();
    store.finish_reply(stopped, ReplyEnd::Stopped, None).await.unwrap();
    let m = store.message(stopped).await.unwrap();
    assert_eq!((m.status, m.content.as_str(), m.stats), (MessageStatus::Stopped, "1 2 3", None));

    // Regenerate: a sibling reply, which fails.
    let failed = store.start_reply(c, q).await.unwrap();
    store.append_reply(failed, "1 2").await.unwrap();
    let partial = ReplyStats { time_to_first_token_ms: None, decode_tokens_per_second: None, ..stats() };
    store.finish_reply(failed, ReplyEnd::Error("out of memory".into()), Some(&partial)).await.unwrap();
    let m = store.message(failed).await.unwrap();
    assert_eq!(m.status, MessageStatus::Error);
    assert_eq!(m.error.as_deref(), Some("out of memory"));
    assert_eq!(m.content, "1 2");
    assert_eq!(m.stats, Some(partial));
    assert_eq!(store.siblings(failed).await.unwrap().ids, vec![stopped, failed]);

    // A provider's stream cut mid-reply: the text so far, marked interrupted, with why.
    let cut = store.start_reply(c, q).await.unwrap();
    store.append_reply(cut, "1 2 3 4").await.unwrap();
    store.finish_reply(cut, ReplyEnd::Interrupted("the connection closed".into()), None).await.unwrap();
    let m = store.message(cut).await.unwrap();
    assert_eq!((m.status, m.content.as_str(), m.error.as_deref()), (MessageStatus::Interrupted, "1 2 3 4", Some("the connection closed")));
    assert_healthy(&store).await;
}

#[tokio::test]
async fn a_finished_reply_cannot_be_appended_to_or_finished_again() {
    let (store, _dir) = store().await;
    let c = conversation(&store, "chat").await.id;
    let q = store.add_message(c, None, Role::User, "hi").await.unwrap();
    let r = store.start_reply(c, q).await.unwrap();
    store.finish_reply(r, ReplyEnd::Complete, None).await.unwrap();

    for error in [
        store.append_reply(r, "more").await.unwrap_err(),
        store.append_reply(r, "").await.unwrap_err(),
        store.finish_reply(r, ReplyEnd::Stopped, None).await.unwrap_err(),
        store.append_reply(q, "into a user message").await.unwrap_err(),
    ] {
        assert!(matches!(error, StoreError::NotStreaming { .. }), "{error:?}");
    }
    let message = store.append_reply(r, "x").await.unwrap_err().to_string();
    assert!(message.contains("is not a reply in progress (its status is complete)"), "{message}");
    let missing = confab_store::MessageId(12345);
    assert!(matches!(store.append_reply(missing, "x").await, Err(StoreError::NotFound { .. })));
    assert!(matches!(store.finish_reply(missing, ReplyEnd::Complete, None).await, Err(StoreError::NotFound { .. })));
    assert!(matches!(store.start_reply(c, missing).await, Err(StoreError::NotFound { .. })));
    assert_eq!(store.message(r).await.unwrap().content, "");
}

#[tokio::test]
async fn recover_marks_streaming_replies_interrupted_keeping_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite");
    let store = confab_store::Store::open(&path).await.unwrap();
    let c = conversation(&store, "chat").await.id;
    let q = store.add_message(c, None, Role::User, "Tell me a story about a lighthouse").await.unwrap();
    let r = store.start_reply(c, q).await.unwrap();
    store.append_reply(r, "Once upon a time, ").await.unwrap();
    store.append_reply(r, "a lighthouse keeper").await.unwrap();
    let empty = store.start_reply(c, q).await.unwrap();
    let finished = store.start_reply(c, q).await.unwrap();
    store.finish_reply(finished, ReplyEnd::Complete, None).await.unwrap();
    drop(store); // as if the process died: nothing finishes the replies

    let store = confab_store::Store::open(&path).await.unwrap();
    assert_eq!(store.message(r).await.unwrap().status, MessageStatus::Streaming);
    assert_eq!(store.recover_interrupted().await.unwrap(), vec![r, empty]);
    let m = store.message(r).await.unwrap();
    assert_eq!((m.status, m.content.as_str()), (MessageStatus::Interrupted, "Once upon a time, a lighthouse keeper"));
    assert_eq!(store.message(empty).await.unwrap().status, MessageStatus::Interrupted);
    assert_eq!(store.message(finished).await.unwrap().status, MessageStatus::Complete);
    // Interrupted text is searchable, and recovering again finds nothing.
    assert_eq!(store.search("keeper", 5).await.unwrap()[0].message_id, r);
    assert!(store.recover_interrupted().await.unwrap().is_empty());
    assert!(matches!(store.append_reply(r, "x").await, Err(StoreError::NotStreaming { .. })));
    assert_healthy(&store).await;
}

#[tokio::test]
async fn appends_stay_cheap_for_long_replies() {
    let (store, _dir) = store().await;
    let c = conversation(&store, "chat").await.id;
    let q = store.add_message(c, None, Role::User, "Write a lot").await.unwrap();
    let r = store.start_reply(c, q).await.unwrap();
    let delta = "lorem ipsum dolor sit amet, ";
    let n = 5000;
    let start = std::time::Instant::now();
    for _ in 0..n {
        store.append_reply(r, delta).await.unwrap();
    }
    let elapsed = start.elapsed();
    println!("{n} appends of {} bytes: {:?} ({:.1} µs each)", delta.len(), elapsed, elapsed.as_secs_f64() * 1e6 / n as f64);
    store.finish_reply(r, ReplyEnd::Complete, None).await.unwrap();
    assert_eq!(store.message(r).await.unwrap().content, delta.repeat(n));
    assert_healthy(&store).await;
}

#[tokio::test]
async fn a_stopped_reply_is_continued_in_place() {
    let (store, _dir) = store().await;
    let c = conversation(&store, "chat").await.id;
    let q = store.add_message(c, None, Role::User, "Count").await.unwrap();
    let r = store.start_reply(c, q).await.unwrap();
    store.append_reply(r, "1 2 3").await.unwrap();
    store.finish_reply(r, ReplyEnd::Stopped, None).await.unwrap();

    store.resume_reply(r).await.unwrap();
    assert_eq!(store.message(r).await.unwrap().status, MessageStatus::Streaming);
    store.append_reply(r, " 4 5").await.unwrap();
    store.finish_reply(r, ReplyEnd::Complete, Some(&stats())).await.unwrap();
    let done = store.message(r).await.unwrap();
    assert_eq!((done.status, done.content.as_str()), (MessageStatus::Complete, "1 2 3 4 5"));
    assert_eq!(store.siblings(r).await.unwrap().ids, vec![r], "the same message, not a new one");
    assert_eq!(store.search("5", 5).await.unwrap()[0].message_id, r);

    // A complete reply, or the user's own message, is not continued.
    let refused = store.resume_reply(r).await.unwrap_err().to_string();
    assert!(refused.contains("only a stopped, interrupted or cut reply"), "{refused}");
    assert!(store.resume_reply(q).await.is_err());
    assert_healthy(&store).await;
}

#[tokio::test]
async fn a_reply_the_token_limit_cut_keeps_why_and_can_be_continued() {
    let (store, _dir) = store().await;
    let c = conversation(&store, "chat").await.id;
    let q = store.add_message(c, None, Role::User, "Count").await.unwrap();
    let r = store.start_reply(c, q).await.unwrap();
    store.append_reply_part(r, ReplyText::Reasoning, "1 2").await.unwrap();
    let cut = ReplyStats { stop_reason: Some(StopReason::TokenLimit), ..stats() };
    store.finish_reply(r, ReplyEnd::Complete, Some(&cut)).await.unwrap();
    let done = store.message(r).await.unwrap();
    assert_eq!((done.status, done.stats.unwrap().stop_reason), (MessageStatus::Complete, Some(StopReason::TokenLimit)));

    store.resume_reply(r).await.unwrap();
    store.append_reply_part(r, ReplyText::Reasoning, " 3").await.unwrap();
    let ended = ReplyStats { stop_reason: Some(StopReason::EndOfTurn), ..stats() };
    store.finish_reply(r, ReplyEnd::Complete, Some(&ended)).await.unwrap();
    let done = store.message(r).await.unwrap();
    assert_eq!(done.reasoning.as_deref(), Some("1 2 3"));
    assert_eq!(done.stats.unwrap().stop_reason, Some(StopReason::EndOfTurn));
    // Finished by the model itself: nothing to continue.
    assert!(store.resume_reply(r).await.is_err());
    assert_healthy(&store).await;
}

#[tokio::test]
async fn a_reply_s_reasoning_streams_apart_from_its_answer_and_is_kept() {
    let (store, dir) = store().await;
    let c = conversation(&store, "chat").await.id;
    let q = store.add_message(c, None, Role::User, "Why?").await.unwrap();
    let r = store.start_reply(c, q).await.unwrap();
    assert_eq!(store.message(r).await.unwrap().reasoning, None);
    store.append_reply_part(r, ReplyText::Reasoning, "Let me ").await.unwrap();
    store.append_reply_part(r, ReplyText::Reasoning, "think.").await.unwrap();
    let thinking = store.message(r).await.unwrap();
    assert_eq!((thinking.reasoning.as_deref(), thinking.content.as_str(), thinking.reasoning_ms), (Some("Let me think."), "", None));
    store.set_reasoning_time(r, 3200).await.unwrap();
    store.append_reply(r, "Because").await.unwrap();
    store.append_reply_part(r, ReplyText::Answer, ".").await.unwrap();
    assert_eq!(store.current_branch(c).await.unwrap()[1].reasoning.as_deref(), Some("Let me think."));
    store.finish_reply(r, ReplyEnd::Stopped, None).await.unwrap();

    let done = store.message(r).await.unwrap();
    assert_eq!((done.content.as_str(), done.reasoning.as_deref(), done.reasoning_ms), ("Because.", Some("Let me think."), Some(3200)));
    assert_eq!(store.search("Because", 5).await.unwrap().len(), 1, "the answer is searched");
    assert!(store.search("think", 5).await.unwrap().is_empty(), "the reasoning is not");

    // Continued: more of the answer, the reasoning as it was.
    store.resume_reply(r).await.unwrap();
    store.append_reply(r, " Yes.").await.unwrap();
    store.finish_reply(r, ReplyEnd::Complete, None).await.unwrap();
    let continued = store.message(r).await.unwrap();
    assert_eq!((continued.content.as_str(), continued.reasoning.as_deref()), ("Because. Yes.", Some("Let me think.")));

    // A crash mid-thought keeps the reasoning so far.
    let cut = store.start_reply(c, q).await.unwrap();
    store.append_reply_part(cut, ReplyText::Reasoning, "Hmm").await.unwrap();
    store.close().await;
    let store = confab_store::Store::open(dir.path().join("history.sqlite")).await.unwrap();
    assert_eq!(store.recover_interrupted().await.unwrap(), vec![cut]);
    let kept = store.message(cut).await.unwrap();
    assert_eq!((kept.status, kept.reasoning.as_deref(), kept.content.as_str()), (MessageStatus::Interrupted, Some("Hmm"), ""));
    assert!(matches!(store.set_reasoning_time(cut, 1).await, Err(StoreError::NotStreaming { .. })));
    assert_healthy(&store).await;
}
