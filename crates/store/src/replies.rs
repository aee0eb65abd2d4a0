//! A reply's life: `start_reply` → `append_reply`* → `finish_reply`, or, if the process dies
//! first, `recover_interrupted` at the next start.
//!
//! Deltas go to `reply_chunks`, one small row each, so appending costs the same at the first
//! token and the ten-thousandth (rewriting a growing `messages.content` per delta would write
//! the whole text again every time). Ending a reply folds its chunks into `messages.content`
//! in one transaction; that is also when the reply enters the full-text index.

use serde::{Deserialize, Serialize};

use crate::db::{now_ms, Store};
use crate::error::{Result, StoreError};
use crate::ids::{ConversationId, MessageId};
use crate::messages::{self, ReplyStats, StopReason};
use crate::status::{check_streaming, MessageStatus, Role};

/// How a reply ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "status", content = "error")]
pub enum ReplyEnd {
    Complete,
    /// Stopped by the user.
    Stopped,
    /// Generation failed, with the reason to show.
    Error(String),
    /// The reply was cut off before its end (a remote provider's stream broke); the text so
    /// far is kept, with the reason to show.
    Interrupted(String),
}

/// The text so far of a reply: its content followed by its chunks of content.
const FOLDED_CONTENT: &str = "content || coalesce((SELECT group_concat(c.text, '' ORDER BY c.seq) \
    FROM reply_chunks c WHERE c.message_id = messages.id AND c.part = 'content'), '')";

/// The reasoning so far of a reply, `NULL` when it has none.
const FOLDED_REASONING: &str = "nullif(coalesce(reasoning, '') || coalesce((SELECT group_concat(c.text, '' ORDER BY c.seq) \
    FROM reply_chunks c WHERE c.message_id = messages.id AND c.part = 'reasoning'), ''), '')";

/// Which part of a reply a streamed delta adds to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyText {
    /// The answer.
    Answer,
    /// A thinking model's reasoning before its answer.
    Reasoning,
}

impl ReplyText {
    fn as_str(self) -> &'static str {
        match self {
            ReplyText::Answer => "content",
            ReplyText::Reasoning => "reasoning",
        }
    }
}

impl Store {
    /// Creates an empty assistant reply to `parent` with status `Streaming` and makes it the
    /// conversation's current leaf. A second reply to the same parent is a regeneration.
    pub async fn start_reply(&self, conversation: ConversationId, parent: MessageId) -> Result<MessageId> {
        let mut tx = self.begin_write().await?;
        let id = messages::insert(&mut tx, conversation, Some(parent), Role::Assistant, "", MessageStatus::Streaming).await?;
        tx.commit().await?;
        Ok(id)
    }

    /// Appends `delta` to a streaming reply's answer: one small insert, committed before it
    /// returns.
    pub async fn append_reply(&self, id: MessageId, delta: &str) -> Result<()> {
        self.append_reply_part(id, ReplyText::Answer, delta).await
    }

    /// Appends `delta` to one part of a streaming reply (its answer or its reasoning).
    pub async fn append_reply_part(&self, id: MessageId, part: ReplyText, delta: &str) -> Result<()> {
        if delta.is_empty() {
            return check_streaming(&self.reader, id).await;
        }
        let done = sqlx::query(
            "INSERT INTO reply_chunks (message_id, seq, text, part)
             SELECT m.id, coalesce((SELECT max(seq) FROM reply_chunks WHERE message_id = m.id), 0) + 1, ?2, ?3
             FROM messages m WHERE m.id = ?1 AND m.status = 'streaming'",
        )
        .bind(id.0)
        .bind(delta)
        .bind(part.as_str())
        .execute(&self.writer)
        .await?;
        if done.rows_affected() == 0 {
            check_streaming(&self.reader, id).await?;
        }
        Ok(())
    }

    /// Records how long a streaming reply's model thought, once its thinking is over (its
    /// answer began, or the reply ends mid-thought): saved at once, so a reply a crash cuts
    /// off keeps it too.
    pub async fn set_reasoning_time(&self, id: MessageId, reasoning_ms: u64) -> Result<()> {
        let done = sqlx::query("UPDATE messages SET reasoning_ms = ?2 WHERE id = ?1 AND status = 'streaming'")
            .bind(id.0)
            .bind(i64::try_from(reasoning_ms).unwrap_or(i64::MAX))
            .execute(&self.writer)
            .await?;
        if done.rows_affected() == 0 {
            check_streaming(&self.reader, id).await?;
        }
        Ok(())
    }

    /// Ends a streaming reply: its text becomes final, `end` sets its status (and error), and
    /// `stats` are stored with it.
    pub async fn finish_reply(&self, id: MessageId, end: ReplyEnd, stats: Option<&ReplyStats>) -> Result<()> {
        let (status, error) = match end {
            ReplyEnd::Complete => (MessageStatus::Complete, None),
            ReplyEnd::Stopped => (MessageStatus::Stopped, None),
            ReplyEnd::Error(reason) => (MessageStatus::Error, Some(reason)),
            ReplyEnd::Interrupted(reason) => (MessageStatus::Interrupted, Some(reason)),
        };
        let stat = |f: fn(&ReplyStats) -> Option<i64>| stats.and_then(f);
        let speculative = stats.and_then(|s| s.speculative.as_ref());
        let mut tx = self.begin_write().await?;
        let conversation: Option<i64> = sqlx::query_scalar(&format!(
            "UPDATE messages SET content = {FOLDED_CONTENT}, reasoning = {FOLDED_REASONING}, status = ?2, error = ?3,
                 prompt_tokens = ?4, cached_tokens = ?5, generated_tokens = ?6,
                 ttft_ms = ?7, decode_tok_s = ?8, stats_model = ?9,
                 spec_method = ?10, spec_proposed = ?11, spec_accepted = ?12, spec_acceptance = ?13, spec_tokens_per_step = ?14,
                 steps_per_canvas = ?15, stop_reason = ?16
             WHERE id = ?1 AND status = 'streaming' RETURNING conversation_id"
        ))
        .bind(id.0)
        .bind(status.as_str())
        .bind(error)
        .bind(stat(|s| Some(i64::from(s.prompt_tokens))))
        .bind(stat(|s| Some(i64::from(s.cached_tokens))))
        .bind(stat(|s| Some(i64::from(s.generated_tokens))))
        .bind(stat(|s| s.time_to_first_token_ms.map(|ms| i64::try_from(ms).unwrap_or(i64::MAX))))
        .bind(stats.and_then(|s| s.decode_tokens_per_second).filter(|v| v.is_finite()))
        .bind(stats.map(|s| s.model.as_str()))
        .bind(speculative.map(|s| s.method.as_str()))
        .bind(speculative.map(|s| i64::from(s.proposed)))
        .bind(speculative.map(|s| i64::from(s.accepted)))
        .bind(speculative.map(|s| s.acceptance_rate).filter(|v| v.is_finite()))
        .bind(speculative.map(|s| s.tokens_per_step).filter(|v| v.is_finite()))
        .bind(
            stats
                .filter(|s| !s.steps_per_canvas.is_empty())
                .map(|s| s.steps_per_canvas.iter().map(u32::to_string).collect::<Vec<_>>().join(",")),
        )
        .bind(stats.and_then(|s| s.stop_reason).map(StopReason::as_str))
        .fetch_optional(&mut *tx)
        .await?;
        let Some(conversation) = conversation else {
            return check_streaming(&mut *tx, id).await;
        };
        // A reply that ends leaves no call live: one its stream broke off is interrupted, like
        // after a crash; any other end (Stop, an error) cancels it.
        let closed = if status == MessageStatus::Interrupted { "interrupted" } else { "cancelled" };
        sqlx::query("UPDATE tool_calls SET status = ?2, ended_at = ?3 WHERE message_id = ?1 AND status IN ('awaiting', 'running')")
            .bind(id.0)
            .bind(closed)
            .bind(now_ms())
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM reply_chunks WHERE message_id = ?1").bind(id.0).execute(&mut *tx).await?;
        sqlx::query("UPDATE conversations SET updated_at = ?2 WHERE id = ?1").bind(conversation).bind(now_ms()).execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Opens a stopped, interrupted or cut reply (one the token limit ended) again so that more
    /// text can be appended to it ("Continue"): it is `Streaming` once more, its error cleared,
    /// and `append_reply` and `finish_reply` go on from its text.
    pub async fn resume_reply(&self, id: MessageId) -> Result<()> {
        let resumed = sqlx::query(
            "UPDATE messages SET status = 'streaming', error = NULL
             WHERE id = ?1 AND role = 'assistant'
               AND (status IN ('stopped', 'interrupted') OR (status = 'complete' AND stop_reason = 'token_limit'))",
        )
        .bind(id.0)
        .execute(&self.writer)
        .await?;
        if resumed.rows_affected() == 1 {
            return Ok(());
        }
        let message = self.message(id).await?;
        Err(StoreError::InvalidInput(format!(
            "only a stopped, interrupted or cut reply can be continued; this message is {} and {}",
            message.role.as_str(),
            message.status.as_str()
        )))
    }

    /// Marks every reply still `Streaming` as `Interrupted`, keeping the text it had (and its
    /// tool calls still awaiting or running as interrupted, keeping the results saved); returns
    /// their ids. Call once at start-up: a reply left streaming there was cut off by a crash
    /// or kill. (Not while another process may be streaming into the same file.)
    pub async fn recover_interrupted(&self) -> Result<Vec<MessageId>> {
        let mut tx = self.begin_write().await?;
        // Their calls still awaiting or running were cut off too; the results already saved stay.
        sqlx::query(
            "UPDATE tool_calls SET status = 'interrupted', ended_at = ?1
             WHERE status IN ('awaiting', 'running') AND message_id IN (SELECT id FROM messages WHERE status = 'streaming')",
        )
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
        let ids: Vec<i64> = sqlx::query_scalar(&format!(
            "UPDATE messages SET content = {FOLDED_CONTENT}, reasoning = {FOLDED_REASONING}, status = 'interrupted'
             WHERE status = 'streaming' RETURNING id"
        ))
        .fetch_all(&mut *tx)
        .await?;
        sqlx::query(
            "DELETE FROM reply_chunks
             WHERE message_id NOT IN (SELECT id FROM messages WHERE status = 'streaming')",
        )
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        let mut ids: Vec<MessageId> = ids.into_iter().map(MessageId).collect();
        ids.sort();
        Ok(ids)
    }
}
