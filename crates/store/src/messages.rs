//! Messages form a tree per conversation: an edit or a regeneration is a new sibling (same
//! parent), never an overwrite. The UI shows one path, root → the conversation's current leaf.

use std::str::FromStr;

use serde::{Deserialize, Serialize};
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, Sqlite, Transaction};
use ts_rs::TS;

use crate::attachments::{self, AttachmentHash};
use crate::conversations;
use crate::db::{now_ms, Store};
use crate::error::{Result, StoreError};
use crate::ids::{ConversationId, MessageId};
use crate::status::{MessageStatus, Role};
use crate::tool_calls::{self, ToolCall};

/// How a reply was generated; stored with the reply by `finish_reply`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct ReplyStats {
    pub prompt_tokens: u32,
    /// Prompt tokens served from the prefix cache instead of being prefilled.
    pub cached_tokens: u32,
    pub generated_tokens: u32,
    /// `None` when no token came (e.g. an error during prefill).
    pub time_to_first_token_ms: Option<u64>,
    /// Tokens per second after the first; for a denoising reply, its tokens over the time its
    /// canvases took (they come a canvas at a time).
    pub decode_tokens_per_second: Option<f64>,
    pub model: String,
    /// What speculative decoding did; `None` where the reply decoded plainly.
    #[serde(default)]
    pub speculative: Option<SpeculativeReplyStats>,
    /// A denoising model's reply: the steps each of its canvases took (empty for others).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<u32>>", optional)]
    pub steps_per_canvas: Vec<u32>,
    /// Why the model stopped; `None` where it did not say (a stopped or failed reply, one
    /// written before this was kept, a provider that gave no reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub stop_reason: Option<StopReason>,
}

/// Why a model stopped writing a reply that ended on its own. A reply cut by the token limit
/// (or a full context) is not finished: the window says so and offers Continue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model ended its turn (an end-of-sequence token).
    EndOfTurn,
    /// One of the stop strings.
    StopString,
    /// The reply reached the longest reply allowed (its token limit).
    TokenLimit,
    /// The model's context is full.
    ContextFull,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::EndOfTurn => "end_of_turn",
            StopReason::StopString => "stop_string",
            StopReason::TokenLimit => "token_limit",
            StopReason::ContextFull => "context_full",
        }
    }

    /// `None` for a value this version does not know (a newer one wrote it).
    pub fn parse(text: &str) -> Option<StopReason> {
        [StopReason::EndOfTurn, StopReason::StopString, StopReason::TokenLimit, StopReason::ContextFull]
            .into_iter()
            .find(|reason| reason.as_str() == text)
    }
}

/// Speculative decoding's part in a reply, as the engine reported it (its `SpeculativeStats`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct SpeculativeReplyStats {
    /// `prompt_lookup` or `draft_model`.
    pub method: String,
    pub proposed: u32,
    /// Proposed tokens the model kept.
    pub accepted: u32,
    /// `accepted / proposed`.
    pub acceptance_rate: f64,
    /// Tokens each verifying pass gave (plain decoding gives 1 per pass).
    pub tokens_per_step: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct Message {
    pub id: MessageId,
    pub conversation_id: ConversationId,
    pub parent_id: Option<MessageId>,
    pub role: Role,
    /// For a `Streaming` reply, the text appended so far. A thinking model's answer only.
    pub content: String,
    /// What a thinking model wrote before its answer (so far, while `Streaming`); `None` when
    /// it wrote none.
    pub reasoning: Option<String>,
    /// How long the model thought: from its first reasoning to its answer's start (or the
    /// reply's end). `None` while it still thinks, and for replies without reasoning.
    pub reasoning_ms: Option<u64>,
    pub status: MessageStatus,
    /// Why generation failed, for status `Error` (and `Interrupted` when the cause is known).
    pub error: Option<String>,
    /// Unix milliseconds.
    pub created_at: i64,
    pub stats: Option<ReplyStats>,
    /// An assistant reply's tool calls, in the order they were added (see tool_calls.rs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<ToolCall>>", optional)]
    pub tool_calls: Vec<ToolCall>,
}

/// A message among its siblings (same parent, oldest first): the UI's "< 2/3 >".
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Siblings {
    pub ids: Vec<MessageId>,
    /// Where the message asked about is in `ids` (0-based).
    pub index: usize,
}

impl Siblings {
    pub fn count(&self) -> usize {
        self.ids.len()
    }
    pub fn previous(&self) -> Option<MessageId> {
        self.index.checked_sub(1).map(|i| self.ids[i])
    }
    pub fn next(&self) -> Option<MessageId> {
        self.ids.get(self.index + 1).copied()
    }
}

/// The columns of `messages m` that [`from_row`] reads. A streaming reply's text (and its
/// reasoning) is its `content` (`reasoning`) followed by its chunks of that part (see replies.rs).
pub(crate) const COLUMNS: &str = "m.id, m.conversation_id, m.parent_id, m.role, \
    CASE WHEN m.status = 'streaming' THEN m.content || coalesce((SELECT group_concat(c.text, '' \
    ORDER BY c.seq) FROM reply_chunks c WHERE c.message_id = m.id AND c.part = 'content'), '') ELSE m.content END \
    AS content, \
    CASE WHEN m.status = 'streaming' THEN nullif(coalesce(m.reasoning, '') || coalesce((SELECT group_concat(c.text, '' \
    ORDER BY c.seq) FROM reply_chunks c WHERE c.message_id = m.id AND c.part = 'reasoning'), ''), '') ELSE m.reasoning END \
    AS reasoning, m.reasoning_ms, \
    m.status, m.error, m.created_at, m.prompt_tokens, m.cached_tokens, m.generated_tokens, \
    m.ttft_ms, m.decode_tok_s, m.stats_model, \
    m.spec_method, m.spec_proposed, m.spec_accepted, m.spec_acceptance, m.spec_tokens_per_step, m.steps_per_canvas, m.stop_reason";

fn decode<T: FromStr<Err = StoreError>>(text: String) -> Result<T, sqlx::Error> {
    text.parse().map_err(|e: StoreError| sqlx::Error::Decode(Box::new(e)))
}

fn count(value: i64) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

fn from_row(row: &SqliteRow) -> Result<Message, sqlx::Error> {
    let generated: Option<i64> = row.try_get("generated_tokens")?;
    let stats = match generated {
        None => None,
        Some(generated) => Some(ReplyStats {
            prompt_tokens: count(row.try_get::<Option<i64>, _>("prompt_tokens")?.unwrap_or(0)),
            cached_tokens: count(row.try_get::<Option<i64>, _>("cached_tokens")?.unwrap_or(0)),
            generated_tokens: count(generated),
            time_to_first_token_ms: row.try_get::<Option<i64>, _>("ttft_ms")?.map(|ms| u64::try_from(ms).unwrap_or(0)),
            decode_tokens_per_second: row.try_get("decode_tok_s")?,
            model: row.try_get::<Option<String>, _>("stats_model")?.unwrap_or_default(),
            speculative: match row.try_get::<Option<String>, _>("spec_method")? {
                None => None,
                Some(method) => Some(SpeculativeReplyStats {
                    method,
                    proposed: count(row.try_get::<Option<i64>, _>("spec_proposed")?.unwrap_or(0)),
                    accepted: count(row.try_get::<Option<i64>, _>("spec_accepted")?.unwrap_or(0)),
                    acceptance_rate: row.try_get::<Option<f64>, _>("spec_acceptance")?.unwrap_or(0.0),
                    tokens_per_step: row.try_get::<Option<f64>, _>("spec_tokens_per_step")?.unwrap_or(1.0),
                }),
            },
            steps_per_canvas: row
                .try_get::<Option<String>, _>("steps_per_canvas")?
                .map(|steps| steps.split(',').filter_map(|s| s.parse().ok()).collect())
                .unwrap_or_default(),
            stop_reason: row.try_get::<Option<String>, _>("stop_reason")?.as_deref().and_then(StopReason::parse),
        }),
    };
    Ok(Message {
        id: MessageId(row.try_get("id")?),
        conversation_id: ConversationId(row.try_get("conversation_id")?),
        parent_id: row.try_get::<Option<i64>, _>("parent_id")?.map(MessageId),
        role: decode(row.try_get("role")?)?,
        content: row.try_get("content")?,
        reasoning: row.try_get("reasoning")?,
        reasoning_ms: row.try_get::<Option<i64>, _>("reasoning_ms")?.map(|ms| u64::try_from(ms).unwrap_or(0)),
        status: decode(row.try_get("status")?)?,
        error: row.try_get("error")?,
        created_at: row.try_get("created_at")?,
        stats,
        tool_calls: Vec::new(),
    })
}

impl Store {
    /// Adds a finished message (status `Complete`) under `parent` (`None`: a first message) and
    /// makes it the conversation's current leaf. Adding under a parent that already has
    /// children is how an edit branches.
    pub async fn add_message(
        &self,
        conversation: ConversationId,
        parent: Option<MessageId>,
        role: Role,
        content: &str,
    ) -> Result<MessageId> {
        self.add_message_with_attachments(conversation, parent, role, content, &[]).await
    }

    /// [`Store::add_message`] with attachments (added first with `add_attachment_*`), in order.
    pub async fn add_message_with_attachments(
        &self,
        conversation: ConversationId,
        parent: Option<MessageId>,
        role: Role,
        content: &str,
        attachments: &[AttachmentHash],
    ) -> Result<MessageId> {
        let mut tx = self.begin_write().await?;
        let id = insert(&mut tx, conversation, parent, role, content, MessageStatus::Complete).await?;
        attachments::link(&mut tx, id, attachments).await?;
        tx.commit().await?;
        Ok(id)
    }

    pub async fn message(&self, id: MessageId) -> Result<Message> {
        let query = format!("SELECT {COLUMNS} FROM messages m WHERE m.id = ?1");
        let mut messages = self.load(sqlx::query(&query).bind(id.0)).await?;
        messages.pop().ok_or_else(|| StoreError::not_found("message", id))
    }

    /// Runs a query selecting [`COLUMNS`] and loads the messages' tool calls, in one read
    /// transaction (so a streaming reply's calls never point past the text read with it).
    /// Every query returning messages goes through here.
    async fn load<'q>(&self, query: sqlx::query::Query<'q, Sqlite, sqlx::sqlite::SqliteArguments<'q>>) -> Result<Vec<Message>> {
        let mut tx = self.reader.begin().await?;
        let rows = query.fetch_all(&mut *tx).await?;
        let mut messages = rows.iter().map(from_row).collect::<Result<Vec<_>, _>>()?;
        let replies: Vec<MessageId> = messages.iter().filter(|m| m.role == Role::Assistant).map(|m| m.id).collect();
        let mut calls = tool_calls::of_messages(&mut *tx, &replies).await?;
        tx.commit().await?;
        for message in &mut messages {
            message.tool_calls = calls.remove(&message.id).unwrap_or_default();
        }
        Ok(messages)
    }

    /// The path from the root to `leaf`, root first.
    pub async fn branch(&self, conversation: ConversationId, leaf: MessageId) -> Result<Vec<Message>> {
        let query = format!(
            "WITH RECURSIVE path (id, depth) AS (
                 SELECT id, 0 FROM messages WHERE id = ?1 AND conversation_id = ?2
                 UNION ALL
                 SELECT p.parent_id, path.depth + 1 FROM messages p JOIN path ON p.id = path.id
                 WHERE p.parent_id IS NOT NULL
             )
             SELECT {COLUMNS} FROM path JOIN messages m ON m.id = path.id ORDER BY path.depth DESC"
        );
        let messages = self.load(sqlx::query(&query).bind(leaf.0).bind(conversation.0)).await?;
        if messages.is_empty() {
            self.conversation(conversation).await?;
            return Err(StoreError::not_found("message", format!("{leaf} in conversation {conversation}")));
        }
        Ok(messages)
    }

    /// The path the conversation shows: root → its current leaf (empty for a new conversation).
    pub async fn current_branch(&self, conversation: ConversationId) -> Result<Vec<Message>> {
        match self.conversation(conversation).await?.current_leaf {
            Some(leaf) => self.branch(conversation, leaf).await,
            None => Ok(Vec::new()),
        }
    }

    /// The replies to (or edits under) `message`, oldest first.
    pub async fn children(&self, message: MessageId) -> Result<Vec<Message>> {
        self.message(message).await?;
        let query = format!("SELECT {COLUMNS} FROM messages m WHERE m.parent_id = ?1 ORDER BY m.id");
        self.load(sqlx::query(&query).bind(message.0)).await
    }

    /// `message` and its siblings, oldest first, and its place among them.
    pub async fn siblings(&self, message: MessageId) -> Result<Siblings> {
        let ids: Vec<i64> = sqlx::query_scalar(
            "SELECT s.id FROM messages m JOIN messages s
               ON s.conversation_id = m.conversation_id AND s.parent_id IS m.parent_id
             WHERE m.id = ?1 ORDER BY s.id",
        )
        .bind(message.0)
        .fetch_all(&self.reader)
        .await?;
        let index = ids.iter().position(|&id| id == message.0).ok_or_else(|| StoreError::not_found("message", message))?;
        Ok(Siblings { ids: ids.into_iter().map(MessageId).collect(), index })
    }

    /// The leaf reached from `message` by always following its newest child.
    pub async fn latest_leaf(&self, message: MessageId) -> Result<MessageId> {
        let leaf: Option<i64> = sqlx::query_scalar(
            "WITH RECURSIVE down (id, depth) AS (
                 SELECT id, 0 FROM messages WHERE id = ?1
                 UNION ALL
                 SELECT (SELECT max(c.id) FROM messages c WHERE c.parent_id = down.id), depth + 1
                 FROM down WHERE down.id IS NOT NULL
             )
             SELECT id FROM down WHERE id IS NOT NULL ORDER BY depth DESC LIMIT 1",
        )
        .bind(message.0)
        .fetch_optional(&self.reader)
        .await?;
        leaf.map(MessageId).ok_or_else(|| StoreError::not_found("message", message))
    }

    /// Switches the conversation to the branch through `message` (e.g. a sibling picked with
    /// "< >"): its current leaf becomes [`Store::latest_leaf`] of `message`, which is returned.
    pub async fn select_branch(&self, conversation: ConversationId, message: MessageId) -> Result<MessageId> {
        let leaf = self.latest_leaf(message).await?;
        self.set_current_leaf(conversation, leaf).await?;
        Ok(leaf)
    }
}

/// Inside a write: inserts a message after checking that the conversation exists and that
/// `parent` belongs to it, and makes it the conversation's current leaf.
pub(crate) async fn insert(
    tx: &mut Transaction<'_, Sqlite>,
    conversation: ConversationId,
    parent: Option<MessageId>,
    role: Role,
    content: &str,
    status: MessageStatus,
) -> Result<MessageId> {
    conversations::ensure_exists(tx, conversation).await?;
    if let Some(parent) = parent {
        let owner: Option<i64> =
            sqlx::query_scalar("SELECT conversation_id FROM messages WHERE id = ?1").bind(parent.0).fetch_optional(&mut **tx).await?;
        match owner {
            None => return Err(StoreError::not_found("message", parent)),
            Some(owner) if owner != conversation.0 => {
                return Err(StoreError::InvalidInput(format!("message {parent} belongs to conversation {owner}, not {conversation}")))
            }
            Some(_) => {}
        }
    }
    let now = now_ms();
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO messages (conversation_id, parent_id, role, content, status, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
    )
    .bind(conversation.0)
    .bind(parent.map(|p| p.0))
    .bind(role.as_str())
    .bind(content)
    .bind(status.as_str())
    .bind(now)
    .fetch_one(&mut **tx)
    .await?;
    let id = MessageId(id);
    conversations::move_leaf(tx, conversation, id, now).await?;
    Ok(id)
}
