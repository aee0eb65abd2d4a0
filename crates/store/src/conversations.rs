//! Conversations: create, list (newest activity first, keyset-paginated), get, update, delete.

use serde::{Deserialize, Serialize};
use sqlx::sqlite::SqliteRow;
use sqlx::{Row, Sqlite, Transaction};
use ts_rs::TS;

use crate::attachments;
use crate::db::{begin_immediate, now_ms, Store};
use crate::error::{Result, StoreError};
use crate::ids::{ConversationId, MessageId};

/// The largest page [`Store::list_conversations`] returns; bigger limits are clamped to it.
pub const MAX_PAGE: u32 = 500;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct Conversation {
    pub id: ConversationId,
    pub title: String,
    /// Unix milliseconds.
    pub created_at: i64,
    /// Unix milliseconds; bumped by new messages, finished replies and edits to the conversation.
    pub updated_at: i64,
    pub model: Option<String>,
    pub system_prompt: Option<String>,
    /// The message whose path from the root the UI shows; `None` while empty.
    pub current_leaf: Option<MessageId>,
    /// The chat's thinking switch (on by default), for models whose template has one.
    pub thinking: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NewConversation {
    pub title: String,
    pub model: Option<String>,
    pub system_prompt: Option<String>,
    /// `None`: on, the default.
    pub thinking: Option<bool>,
}

/// Where the next page starts: the last conversation of the previous one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ConversationCursor {
    pub updated_at: i64,
    pub id: ConversationId,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, TS)]
pub struct ConversationPage {
    pub conversations: Vec<Conversation>,
    /// Pass this to get the following page; `None` on the last page.
    pub next: Option<ConversationCursor>,
}

const COLUMNS: &str = "id, title, created_at, updated_at, model, system_prompt, current_leaf_id, thinking";

fn from_row(row: &SqliteRow) -> Result<Conversation, sqlx::Error> {
    Ok(Conversation {
        id: ConversationId(row.try_get("id")?),
        title: row.try_get("title")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        model: row.try_get("model")?,
        system_prompt: row.try_get("system_prompt")?,
        current_leaf: row.try_get::<Option<i64>, _>("current_leaf_id")?.map(MessageId),
        thinking: row.try_get("thinking")?,
    })
}

impl Store {
    pub async fn create_conversation(&self, new: NewConversation) -> Result<Conversation> {
        let now = now_ms();
        let row = sqlx::query(&format!(
            "INSERT INTO conversations (title, created_at, updated_at, model, system_prompt, thinking)
             VALUES (?1, ?2, ?2, ?3, ?4, ?5) RETURNING {COLUMNS}"
        ))
        .bind(&new.title)
        .bind(now)
        .bind(&new.model)
        .bind(&new.system_prompt)
        .bind(new.thinking.unwrap_or(true))
        .fetch_one(&self.writer)
        .await?;
        Ok(from_row(&row)?)
    }

    pub async fn conversation(&self, id: ConversationId) -> Result<Conversation> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM conversations WHERE id = ?1"))
            .bind(id.0)
            .fetch_optional(&self.reader)
            .await?
            .ok_or_else(|| StoreError::not_found("conversation", id))?;
        Ok(from_row(&row)?)
    }

    /// Conversations, most recently updated first. Pass `None` for the first page and the
    /// previous page's `next` for the following ones. `limit` is clamped to 1..=[`MAX_PAGE`].
    /// Uses the `(updated_at, id)` index: a page costs the same at any depth.
    pub async fn list_conversations(&self, limit: u32, after: Option<ConversationCursor>) -> Result<ConversationPage> {
        let limit = limit.clamp(1, MAX_PAGE);
        let (updated_at, id) = after.map_or((i64::MAX, i64::MAX), |c| (c.updated_at, c.id.0));
        // One extra row tells whether there is a next page.
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM conversations
             WHERE (updated_at, id) < (?1, ?2)
             ORDER BY updated_at DESC, id DESC LIMIT ?3"
        ))
        .bind(updated_at)
        .bind(id)
        .bind(i64::from(limit) + 1)
        .fetch_all(&self.reader)
        .await?;
        let mut conversations = rows.iter().map(from_row).collect::<Result<Vec<_>, _>>()?;
        let next = if conversations.len() > limit as usize {
            conversations.truncate(limit as usize);
            conversations.last().map(|c| ConversationCursor { updated_at: c.updated_at, id: c.id })
        } else {
            None
        };
        Ok(ConversationPage { conversations, next })
    }

    pub async fn rename_conversation(&self, id: ConversationId, title: &str) -> Result<()> {
        self.update_conversation(id, "title", Some(title)).await
    }

    pub async fn set_conversation_model(&self, id: ConversationId, model: Option<&str>) -> Result<()> {
        self.update_conversation(id, "model", model).await
    }

    pub async fn set_system_prompt(&self, id: ConversationId, prompt: Option<&str>) -> Result<()> {
        self.update_conversation(id, "system_prompt", prompt).await
    }

    /// Turns the chat's thinking switch on or off (its replies after this one follow it).
    pub async fn set_thinking(&self, id: ConversationId, on: bool) -> Result<()> {
        let done = sqlx::query("UPDATE conversations SET thinking = ?2 WHERE id = ?1").bind(id.0).bind(on).execute(&self.writer).await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::not_found("conversation", id));
        }
        Ok(())
    }

    /// `column` is one of our literals, never user input.
    async fn update_conversation(&self, id: ConversationId, column: &'static str, value: Option<&str>) -> Result<()> {
        let done = sqlx::query(&format!("UPDATE conversations SET {column} = ?2, updated_at = ?3 WHERE id = ?1"))
            .bind(id.0)
            .bind(value)
            .bind(now_ms())
            .execute(&self.writer)
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::not_found("conversation", id));
        }
        Ok(())
    }

    /// Deletes the conversation with its messages (and so their search entries, attachment
    /// links and tool calls). Attachment files no other message or tool result uses are deleted
    /// too; shared ones stay.
    pub async fn delete_conversation(&self, id: ConversationId) -> Result<()> {
        // The writer stays held until the files are gone (see `add_attachment_*`).
        let mut writer = self.writer.acquire().await?;
        let mut tx = begin_immediate(&mut writer).await?;
        let hashes: Vec<String> = sqlx::query_scalar(
            "SELECT a.hash FROM message_attachments a
             JOIN messages m ON m.id = a.message_id WHERE m.conversation_id = ?1
             UNION
             SELECT i.value FROM tool_calls t JOIN messages m ON m.id = t.message_id, json_each(t.result_images) i
             WHERE m.conversation_id = ?1 AND t.result_images IS NOT NULL",
        )
        .bind(id.0)
        .fetch_all(&mut *tx)
        .await?;
        let done = sqlx::query("DELETE FROM conversations WHERE id = ?1").bind(id.0).execute(&mut *tx).await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::not_found("conversation", id));
        }
        let unused = attachments::delete_unused_rows(&mut tx, hashes).await?;
        tx.commit().await?;
        attachments::remove_files(&self.attachments_dir, &unused);
        Ok(())
    }

    /// Makes `leaf` the message whose path the conversation shows (see [`Store::current_branch`]).
    pub async fn set_current_leaf(&self, conversation: ConversationId, leaf: MessageId) -> Result<()> {
        let done = sqlx::query(
            "UPDATE conversations SET current_leaf_id = ?2
             WHERE id = ?1 AND EXISTS (SELECT 1 FROM messages WHERE id = ?2 AND conversation_id = ?1)",
        )
        .bind(conversation.0)
        .bind(leaf.0)
        .execute(&self.writer)
        .await?;
        if done.rows_affected() == 0 {
            self.conversation(conversation).await?;
            return Err(StoreError::not_found("message", format!("{leaf} in conversation {conversation}")));
        }
        Ok(())
    }
}

/// Inside a write: fails with `NotFound` unless the conversation exists.
pub(crate) async fn ensure_exists(tx: &mut Transaction<'_, Sqlite>, id: ConversationId) -> Result<()> {
    let found: Option<i64> = sqlx::query_scalar("SELECT id FROM conversations WHERE id = ?1").bind(id.0).fetch_optional(&mut **tx).await?;
    found.map(|_| ()).ok_or_else(|| StoreError::not_found("conversation", id))
}

/// Inside a write: the conversation now shows `leaf` and counts as updated `now`.
pub(crate) async fn move_leaf(tx: &mut Transaction<'_, Sqlite>, id: ConversationId, leaf: MessageId, now: i64) -> Result<()> {
    sqlx::query("UPDATE conversations SET current_leaf_id = ?2, updated_at = ?3 WHERE id = ?1")
        .bind(id.0)
        .bind(leaf.0)
        .bind(now)
        .execute(&mut **tx)
        .await?;
    Ok(())
}
