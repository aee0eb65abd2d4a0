//! Fills a history with many conversations through the public API, for startup measurements
//! (bench/startup.py) and trying the app with a long history:
//!
//!     cargo run -p confab-store --example seed -- $CONFAB_HOME/confab.db [conversations] [messages]
//!
//! Each conversation gets `messages` (default 4) alternating user and assistant messages, the
//! replies through the reply lifecycle (start, append, finish) as the app writes them.

use std::time::Instant;

use confab_store::{NewConversation, ReplyEnd, ReplyStats, Role, StopReason, Store};

const TOPICS: &[&str] = &[
    "bread baking",
    "the Roman empire",
    "tide pools",
    "Rust lifetimes",
    "jazz harmony",
    "orbital mechanics",
    "sourdough starters",
    "medieval castles",
    "coral reefs",
    "SQLite indexes",
    "bird migration",
    "tea ceremonies",
];

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: seed DB_PATH [CONVERSATIONS] [MESSAGES_PER_CONVERSATION]")?;
    let conversations: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(5000);
    let messages: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(4);

    let start = Instant::now();
    let store = Store::open(&path).await?;
    for i in 0..conversations {
        let topic = TOPICS[i % TOPICS.len()];
        let conversation = store.create_conversation(NewConversation { title: format!("{topic} #{i}"), ..Default::default() }).await?.id;
        let mut parent = None;
        for m in 0..messages {
            if m % 2 == 0 {
                let text = format!("Question {m} about {topic} (conversation {i}): what should I know first?");
                parent = Some(store.add_message(conversation, parent, Role::User, &text).await?);
            } else {
                let reply = store.start_reply(conversation, parent.expect("a user message first")).await?;
                store.append_reply(reply, &format!("Here is a short answer about {topic}. ")).await?;
                store.append_reply(reply, "It covers the basics and a few details worth remembering.").await?;
                let stats = ReplyStats {
                    prompt_tokens: 40,
                    cached_tokens: 0,
                    generated_tokens: 20,
                    time_to_first_token_ms: Some(120),
                    decode_tokens_per_second: Some(25.0),
                    model: "seed".into(),
                    speculative: None,
                    steps_per_canvas: vec![],
                    stop_reason: Some(StopReason::EndOfTurn),
                };
                store.finish_reply(reply, ReplyEnd::Complete, Some(&stats)).await?;
                parent = Some(reply);
            }
        }
    }
    store.close().await;
    println!("seeded {conversations} conversations x {messages} messages into {path} in {:.1}s", start.elapsed().as_secs_f64());
    Ok(())
}
