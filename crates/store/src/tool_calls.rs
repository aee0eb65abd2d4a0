//! The tool calls of a reply: `add_tool_call` while the reply streams, then the user's
//! `decide_tool_call`, `start_tool_call` and `finish_tool_call`.
//!
//! One assistant reply (one `messages` row) holds all its rounds: its content and reasoning are
//! the text of every round concatenated, and each call records the byte lengths of both when
//! it was added, computed here inside the same transaction as the insert. Calls with the same
//! `round` were asked for in one assistant turn; the app rebuilds the turns from the text
//! slices between the offsets. Ending a reply (`finish_reply`, `recover_interrupted`) closes
//! the calls still awaiting or running (see replies.rs).

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use sqlx::sqlite::SqliteRow;
use sqlx::{Executor, Row, Sqlite};
use ts_rs::TS;

use crate::attachments::AttachmentHash;
use crate::db::{now_ms, Store};
use crate::error::{Result, StoreError};
use crate::ids::MessageId;
use crate::status::{check_streaming, string_enum};

/// What the user said about a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ToolDecision {
    /// Not asked yet, or the question is on screen.
    Pending,
    AllowedOnce,
    /// Allowed, and this tool is not to be asked about again.
    AllowedAlways,
    Denied,
    /// Allowed without asking, because the user earlier allowed this tool always.
    Auto,
}

string_enum!(ToolDecision, "tool call decision", {
    ToolDecision::Pending => "pending",
    ToolDecision::AllowedOnce => "allowed_once",
    ToolDecision::AllowedAlways => "allowed_always",
    ToolDecision::Denied => "denied",
    ToolDecision::Auto => "auto",
});

impl ToolDecision {
    fn allows(self) -> bool {
        matches!(self, ToolDecision::AllowedOnce | ToolDecision::AllowedAlways | ToolDecision::Auto)
    }
}

/// Where a call is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    /// Added; waiting for the user's decision or for the app to run it.
    Awaiting,
    Running,
    /// The tool answered; `ToolCall::result` holds its answer (which may be an error the tool
    /// reported, `ToolResult::is_error`).
    Done,
    /// The call could not run or did not finish (timeout, server gone); `ToolCall::error` says why.
    Failed,
    /// The user denied it.
    Denied,
    /// Stopped by the user, or its reply ended before it ran.
    Cancelled,
    /// Still awaiting or running when the process died (or the reply's stream broke).
    Interrupted,
}

string_enum!(ToolCallStatus, "tool call status", {
    ToolCallStatus::Awaiting => "awaiting",
    ToolCallStatus::Running => "running",
    ToolCallStatus::Done => "done",
    ToolCallStatus::Failed => "failed",
    ToolCallStatus::Denied => "denied",
    ToolCallStatus::Cancelled => "cancelled",
    ToolCallStatus::Interrupted => "interrupted",
});

/// A call the model asked for, as the app adds it to a streaming reply.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewToolCall {
    /// Which assistant turn of the reply asked for it (0, 1, ...); never less than the round of
    /// a call added before.
    pub round: u32,
    /// The model's id for the call, or one the app made up.
    pub call_id: String,
    /// The MCP server offering the tool, if any.
    pub server: Option<String>,
    pub tool: String,
    /// JSON text. Arguments that are not JSON can be kept as a JSON string.
    pub arguments: String,
}

/// What a tool answered.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ToolResult {
    pub text: String,
    /// Images the tool returned, added first with `add_attachment_*`.
    pub images: Vec<AttachmentHash>,
    /// The tool itself reported the result as an error (MCP's `isError`).
    pub is_error: bool,
}

/// How a call ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ToolOutcome {
    /// The tool answered.
    Answered(ToolResult),
    /// It could not run or did not finish (timeout, server gone), with the reason to show.
    Failed(String),
    /// Stopped by the user (also possible before it started).
    Cancelled,
}

/// One tool call of an assistant reply.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ToolCall {
    pub message_id: MessageId,
    /// 0, 1, ... in the order the calls were added to the reply.
    pub position: u32,
    /// Calls with the same round were asked for in one assistant turn.
    pub round: u32,
    pub call_id: String,
    /// The MCP server offering the tool, if any.
    pub server: Option<String>,
    pub tool: String,
    /// JSON text, as the model wrote it.
    pub arguments: String,
    /// Byte length of the reply's content when the call was added: the call comes after
    /// `content[..content_offset]`.
    pub content_offset: u64,
    /// Byte length of the reply's reasoning (0 without any) when the call was added.
    pub reasoning_offset: u64,
    pub decision: ToolDecision,
    pub status: ToolCallStatus,
    /// What the tool answered, once `Done`.
    pub result: Option<ToolResult>,
    /// Why it failed, for `Failed`.
    pub error: Option<String>,
    /// Unix milliseconds.
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub ended_at: Option<i64>,
}

/// The columns of `tool_calls t` that [`from_row`] reads.
const COLUMNS: &str = "t.message_id, t.position, t.round, t.call_id, t.server, t.tool, t.arguments, \
    t.content_offset, t.reasoning_offset, t.decision, t.status, t.result_text, t.result_images, t.is_error, \
    t.error, t.created_at, t.started_at, t.ended_at";

fn decode_error(error: impl std::error::Error + Send + Sync + 'static) -> sqlx::Error {
    sqlx::Error::Decode(Box::new(error))
}

fn from_row(row: &SqliteRow) -> Result<ToolCall, sqlx::Error> {
    let unsigned = |value: i64| u64::try_from(value).unwrap_or(0);
    let small = |value: i64| u32::try_from(value).unwrap_or(0);
    let result = match row.try_get::<Option<String>, _>("result_text")? {
        None => None,
        Some(text) => {
            let images = match row.try_get::<Option<String>, _>("result_images")? {
                None => Vec::new(),
                Some(json) => serde_json::from_str(&json).map_err(decode_error)?,
            };
            Some(ToolResult { text, images, is_error: row.try_get("is_error")? })
        }
    };
    Ok(ToolCall {
        message_id: MessageId(row.try_get("message_id")?),
        position: small(row.try_get("position")?),
        round: small(row.try_get("round")?),
        call_id: row.try_get("call_id")?,
        server: row.try_get("server")?,
        tool: row.try_get("tool")?,
        arguments: row.try_get("arguments")?,
        content_offset: unsigned(row.try_get("content_offset")?),
        reasoning_offset: unsigned(row.try_get("reasoning_offset")?),
        decision: row.try_get::<String, _>("decision")?.parse().map_err(decode_error)?,
        status: row.try_get::<String, _>("status")?.parse().map_err(decode_error)?,
        result,
        error: row.try_get("error")?,
        created_at: row.try_get("created_at")?,
        started_at: row.try_get("started_at")?,
        ended_at: row.try_get("ended_at")?,
    })
}

/// The byte length of a reply's part so far: its folded text plus its chunks still streaming.
fn folded_bytes(column: &str, part: &str) -> String {
    format!(
        "coalesce(length(CAST(m.{column} AS BLOB)), 0) + coalesce((SELECT sum(length(CAST(c.text AS BLOB))) \
         FROM reply_chunks c WHERE c.message_id = m.id AND c.part = '{part}'), 0)"
    )
}

async fn fetch<'e>(executor: impl Executor<'e, Database = Sqlite>, reply: MessageId, position: u32) -> Result<Option<ToolCall>> {
    let row = sqlx::query(&format!("SELECT {COLUMNS} FROM tool_calls t WHERE t.message_id = ?1 AND t.position = ?2"))
        .bind(reply.0)
        .bind(i64::from(position))
        .fetch_optional(executor)
        .await?;
    Ok(row.as_ref().map(from_row).transpose()?)
}

/// The tool calls of `messages`, each message's in order (messages without calls are absent).
pub(crate) async fn of_messages<'e>(
    executor: impl Executor<'e, Database = Sqlite>,
    messages: &[MessageId],
) -> Result<HashMap<MessageId, Vec<ToolCall>>> {
    let mut calls: HashMap<MessageId, Vec<ToolCall>> = HashMap::new();
    if messages.is_empty() {
        return Ok(calls);
    }
    let ids = serde_json::Value::from(messages.iter().map(|m| m.0).collect::<Vec<_>>()).to_string();
    let rows = sqlx::query(&format!(
        "SELECT {COLUMNS} FROM tool_calls t WHERE t.message_id IN (SELECT value FROM json_each(?1))
         ORDER BY t.message_id, t.position"
    ))
    .bind(ids)
    .fetch_all(executor)
    .await?;
    for row in &rows {
        let call = from_row(row)?;
        calls.entry(call.message_id).or_default().push(call);
    }
    Ok(calls)
}

fn unknown_call(reply: MessageId, position: u32) -> StoreError {
    StoreError::not_found("tool call", format!("{position} of message {reply}"))
}

impl Store {
    /// Adds a call the model asked for to a streaming reply, after its other calls; the store
    /// records where in the reply's text it came. Its decision is `Pending` and its status
    /// `Awaiting`.
    pub async fn add_tool_call(&self, reply: MessageId, call: NewToolCall) -> Result<ToolCall> {
        if let Err(error) = serde_json::from_str::<serde::de::IgnoredAny>(&call.arguments) {
            return Err(StoreError::InvalidInput(format!(
                "the arguments of a call to {:?} are not JSON ({error}); save them as a JSON string instead",
                call.tool
            )));
        }
        if call.tool.is_empty() {
            return Err(StoreError::InvalidInput("a tool call needs the tool's name".into()));
        }
        let mut tx = self.begin_write().await?;
        let offsets: Option<(i64, i64)> = sqlx::query_as(&format!(
            "SELECT {}, {} FROM messages m WHERE m.id = ?1 AND m.status = 'streaming'",
            folded_bytes("content", "content"),
            folded_bytes("reasoning", "reasoning")
        ))
        .bind(reply.0)
        .fetch_optional(&mut *tx)
        .await?;
        let Some((content_offset, reasoning_offset)) = offsets else {
            check_streaming(&mut *tx, reply).await?;
            return Err(StoreError::not_found("message", reply));
        };
        let (position, last_round): (i64, Option<i64>) =
            sqlx::query_as("SELECT coalesce(max(position) + 1, 0), max(round) FROM tool_calls WHERE message_id = ?1")
                .bind(reply.0)
                .fetch_one(&mut *tx)
                .await?;
        if let Some(last) = last_round.filter(|&last| last > i64::from(call.round)) {
            return Err(StoreError::InvalidInput(format!(
                "a call of round {} cannot follow a call of round {last} in message {reply}",
                call.round
            )));
        }
        sqlx::query(
            "INSERT INTO tool_calls (message_id, position, round, call_id, server, tool, arguments,
                                     content_offset, reasoning_offset, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )
        .bind(reply.0)
        .bind(position)
        .bind(i64::from(call.round))
        .bind(&call.call_id)
        .bind(&call.server)
        .bind(&call.tool)
        .bind(&call.arguments)
        .bind(content_offset)
        .bind(reasoning_offset)
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
        let position = u32::try_from(position).map_err(|_| StoreError::InvalidInput(format!("message {reply} has too many tool calls")))?;
        let added = fetch(&mut *tx, reply, position).await?.ok_or_else(|| unknown_call(reply, position))?;
        tx.commit().await?;
        Ok(added)
    }

    /// Records the user's decision on an awaiting call that is still `Pending`. `Denied` also
    /// ends the call (status `Denied`); an allowing decision lets `start_tool_call` run it.
    pub async fn decide_tool_call(&self, reply: MessageId, position: u32, decision: ToolDecision) -> Result<ToolCall> {
        if decision == ToolDecision::Pending {
            return Err(StoreError::InvalidInput("a decision on a tool call cannot be `pending`".into()));
        }
        let (status, ended_at) = match decision {
            ToolDecision::Denied => (ToolCallStatus::Denied, Some(now_ms())),
            _ => (ToolCallStatus::Awaiting, None),
        };
        self.update_call(
            reply,
            position,
            "decision = ?3, status = ?4, ended_at = ?5",
            "decision = 'pending' AND status = 'awaiting'",
            |query| query.bind(decision.as_str()).bind(status.as_str()).bind(ended_at),
        )
        .await
        .map_err(|error| error.or_else(|call| format!("it was already decided ({}, {})", call.decision, call.status)))
    }

    /// Marks an allowed, awaiting call `Running` (the app is about to call the tool).
    pub async fn start_tool_call(&self, reply: MessageId, position: u32) -> Result<ToolCall> {
        self.update_call(
            reply,
            position,
            "status = 'running', started_at = ?3",
            "status = 'awaiting' AND decision IN ('allowed_once', 'allowed_always', 'auto')",
            |query| query.bind(now_ms()),
        )
        .await
        .map_err(|error| {
            error.or_else(|call| match call.status {
                ToolCallStatus::Awaiting if !call.decision.allows() => {
                    format!("the user has not allowed it (its decision is {})", call.decision)
                }
                status => format!("it is {status}, not awaiting"),
            })
        })
    }

    /// Ends a call: the tool's answer (for a running call), why it failed (a running call, or an
    /// awaiting one that cannot run), or cancelled (a running or awaiting one). Images must have been added as attachments.
    pub async fn finish_tool_call(&self, reply: MessageId, position: u32, outcome: ToolOutcome) -> Result<ToolCall> {
        if let ToolOutcome::Answered(result) = &outcome {
            for hash in &result.images {
                self.attachment(hash).await?;
            }
        }
        let (status, text, images, is_error, error) = match outcome {
            ToolOutcome::Answered(result) => {
                let images = (!result.images.is_empty())
                    .then(|| serde_json::to_string(&result.images))
                    .transpose()
                    .map_err(|e| StoreError::InvalidInput(e.to_string()))?;
                (ToolCallStatus::Done, Some(result.text), images, result.is_error, None)
            }
            ToolOutcome::Failed(reason) => (ToolCallStatus::Failed, None, None, false, Some(reason)),
            ToolOutcome::Cancelled => (ToolCallStatus::Cancelled, None, None, false, None),
        };
        // A call that cannot run (a tool no server offers, arguments that are not an object)
        // fails before it starts.
        let from = match status {
            ToolCallStatus::Cancelled | ToolCallStatus::Failed => "status IN ('awaiting', 'running')",
            _ => "status = 'running'",
        };
        self.update_call(
            reply,
            position,
            "status = ?3, result_text = ?4, result_images = ?5, is_error = ?6, error = ?7, ended_at = ?8",
            from,
            |query| query.bind(status.as_str()).bind(text).bind(images).bind(is_error).bind(error).bind(now_ms()),
        )
        .await
        .map_err(|error| error.or_else(|call| format!("it is {}, so it cannot become {status}", call.status)))
    }

    /// The calls of a reply, in the order they were added (also in [`crate::Message::tool_calls`]).
    pub async fn tool_calls(&self, reply: MessageId) -> Result<Vec<ToolCall>> {
        let mut calls = of_messages(&self.reader, &[reply]).await?;
        match calls.remove(&reply) {
            Some(calls) => Ok(calls),
            None => self.message(reply).await.map(|_| Vec::new()),
        }
    }

    /// Sets `assignments` (parameters from ?3) on call `position` of `reply` if `condition`
    /// holds; else says why not: the call's current state goes to the caller's wording.
    async fn update_call(
        &self,
        reply: MessageId,
        position: u32,
        assignments: &str,
        condition: &str,
        bind: impl for<'q> FnOnce(SqliteQuery<'q>) -> SqliteQuery<'q>,
    ) -> Result<ToolCall, Refused> {
        let sql = format!("UPDATE tool_calls SET {assignments} WHERE message_id = ?1 AND position = ?2 AND {condition}");
        let mut tx = self.begin_write().await?;
        let done = bind(sqlx::query(&sql).bind(reply.0).bind(i64::from(position))).execute(&mut *tx).await?;
        match fetch(&mut *tx, reply, position).await? {
            None => {
                let message: Option<i64> =
                    sqlx::query_scalar("SELECT id FROM messages WHERE id = ?1").bind(reply.0).fetch_optional(&mut *tx).await?;
                Err(Refused::Error(match message {
                    None => StoreError::not_found("message", reply),
                    Some(_) => unknown_call(reply, position),
                }))
            }
            Some(call) if done.rows_affected() == 0 => Err(Refused::State(call)),
            Some(call) => {
                tx.commit().await?;
                Ok(call)
            }
        }
    }
}

type SqliteQuery<'q> = sqlx::query::Query<'q, Sqlite, sqlx::sqlite::SqliteArguments<'q>>;

/// Why `update_call` changed nothing: an error, or the call was not in a state that allows it.
enum Refused {
    Error(StoreError),
    State(ToolCall),
}

impl From<StoreError> for Refused {
    fn from(error: StoreError) -> Self {
        Refused::Error(error)
    }
}

impl From<sqlx::Error> for Refused {
    fn from(error: sqlx::Error) -> Self {
        Refused::Error(error.into())
    }
}

impl Refused {
    /// The error, with a refusal worded by `why` from the call's state.
    fn or_else(self, why: impl FnOnce(&ToolCall) -> String) -> StoreError {
        match self {
            Refused::Error(error) => error,
            Refused::State(call) => StoreError::InvalidInput(format!(
                "tool call {} ({}) of message {} cannot be changed so: {}",
                call.position,
                call.tool,
                call.message_id,
                why(&call)
            )),
        }
    }
}
