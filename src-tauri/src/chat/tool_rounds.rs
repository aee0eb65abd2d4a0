//! Tool calls in a chat's reply. The model is offered the tools of the servers switched on in
//! Settings › Tools; each call it makes is saved, shown as a card, and waits for the user's
//! decision (once, always for this tool, deny) unless the tool is allowed always; an allowed
//! call runs on its MCP server with the timeout from Settings, and Stop cancels it; its result
//! is saved and given back to the model, which goes on in the same reply. One reply holds all
//! its rounds: its text is every round's text in order, and each call records how much text
//! came before it (`content_offset`), which is how the rounds are rebuilt for the template.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use confab_mcp::{CallError, OutputPart};
use confab_store::{
    AttachmentHash, AttachmentMeta, Message, MessageId, NewToolCall, ReplyStats, Store, ToolCall, ToolCallStatus, ToolDecision,
    ToolOutcome, ToolResult,
};
use serde_json::Value;

use super::events::ReplyEvent;
use crate::failure::Failure;
use crate::state::AppState;
use crate::sync::lock;
use crate::tools::call::{ModelCall, ToolDecisionInput};
use crate::tools::servers::OfferedTool;

/// The tools a reply offers, and its limits.
pub struct Toolbox {
    pub tools: Vec<OfferedTool>,
    pub rounds: u32,
    pub timeout: Duration,
}

/// How often a call waiting for a decision or a result looks at the Stop switch.
const STOP_POLL: Duration = Duration::from_millis(25);

/// Resolves when the Stop switch is on.
pub async fn stopped(cancel: &AtomicBool) {
    while !cancel.load(Ordering::Relaxed) {
        tokio::time::sleep(STOP_POLL).await;
    }
}

impl Toolbox {
    /// The tools of enabled, ready servers switched on in Settings, with the Settings' limits.
    pub async fn for_reply(state: &AppState) -> Toolbox {
        let settings = state.settings();
        let tools = state.tool_servers.lock().await.offered(&state.mcp);
        Toolbox { tools, rounds: settings.tool_rounds, timeout: Duration::from_secs(settings.tool_timeout_s.into()) }
    }

    /// The definitions the template (or the provider's API) is given; empty without tools.
    pub fn definitions(&self) -> Vec<Value> {
        self.tools.iter().map(OfferedTool::definition).collect()
    }

    fn find(&self, called: &str) -> Option<&OfferedTool> {
        self.tools.iter().find(|t| t.called == called)
    }
}

/// How a round of calls ended.
#[derive(Debug, PartialEq, Eq)]
pub enum RoundEnd {
    /// Every call has its result (or the user's refusal): the model goes on.
    Answered,
    /// Stop was pressed while a call waited or ran.
    Stopped,
}

/// Runs the calls of one round in order: each saved and shown, decided, run, its result saved
/// and shown. The model sees every result (or why there is none) in the next round.
pub async fn run_round(
    state: &Arc<AppState>,
    toolbox: &Toolbox,
    reply: MessageId,
    round: u32,
    calls: Vec<ModelCall>,
    cancel: &AtomicBool,
    send: &(dyn Fn(ReplyEvent) + Sync),
) -> Result<RoundEnd, Failure> {
    let store = &state.store;
    for (index, call) in calls.into_iter().enumerate() {
        let offered = toolbox.find(&call.name);
        // Arguments that are not JSON are kept as a JSON string (the column holds JSON).
        let arguments = match &call.arguments {
            Ok(object) => Value::Object(object.clone()).to_string(),
            Err(text) => Value::from(text.as_str()).to_string(),
        };
        let new = NewToolCall {
            round,
            call_id: call.id.clone().unwrap_or_else(|| format!("call_{}_{round}_{index}", reply.0)),
            server: offered.map(|t| t.server.clone()),
            tool: offered.map_or(call.name.clone(), |t| t.tool.clone()),
            arguments,
        };
        let saved = store.add_tool_call(reply, new).await?;
        let position = saved.position;
        let show = |call: ToolCall| send(ReplyEvent::Tool { call: Box::new(call) });
        let fail = |error: String| store.finish_tool_call(reply, position, ToolOutcome::Failed(error));

        // Calls that cannot run are answered at once, without asking: nothing runs.
        let (tool, arguments) = match (offered, call.arguments) {
            (None, _) => {
                let names: Vec<&str> = toolbox.tools.iter().map(|t| t.called.as_str()).collect();
                let error = format!("There is no tool named \"{}\". The tools are: {}.", call.name, names.join(", "));
                show(fail(error).await?);
                continue;
            }
            (Some(_), Err(text)) => {
                show(fail(format!("The arguments are not a JSON object: {text}")).await?);
                continue;
            }
            (Some(tool), Ok(arguments)) => (tool, arguments),
        };

        let decision = if tool.always_allowed {
            ToolDecision::Auto
        } else {
            show(saved);
            match wait_for_decision(state, reply, position, cancel).await {
                None => {
                    show(store.finish_tool_call(reply, position, ToolOutcome::Cancelled).await?);
                    return Ok(RoundEnd::Stopped);
                }
                Some(ToolDecisionInput::Deny) => {
                    show(store.decide_tool_call(reply, position, ToolDecision::Denied).await?);
                    continue;
                }
                Some(ToolDecisionInput::Always) => {
                    state.tool_servers.lock().await.set_always_allowed(tool.server_id, &tool.tool, true, store).await?;
                    ToolDecision::AllowedAlways
                }
                Some(ToolDecisionInput::Once) => ToolDecision::AllowedOnce,
            }
        };
        store.decide_tool_call(reply, position, decision).await?;
        show(store.start_tool_call(reply, position).await?);

        let output = state.mcp.call(&tool.server, &tool.tool, arguments, toolbox.timeout, stopped(cancel)).await;
        match output {
            Ok(output) => {
                let result = tool_result(store, &tool.tool, output).await?;
                show(store.finish_tool_call(reply, position, ToolOutcome::Answered(result)).await?);
            }
            Err(CallError::Cancelled) => {
                show(store.finish_tool_call(reply, position, ToolOutcome::Cancelled).await?);
                return Ok(RoundEnd::Stopped);
            }
            Err(error) => show(fail(crate::failure::tool_call_message(&error)).await?),
        }
    }
    Ok(RoundEnd::Answered)
}

/// Waits for the user's decision on the card; `None` when Stop comes first.
async fn wait_for_decision(state: &AppState, reply: MessageId, position: u32, cancel: &AtomicBool) -> Option<ToolDecisionInput> {
    let (decide, decided) = tokio::sync::oneshot::channel();
    lock(&state.tool_decisions).insert((reply, position), decide);
    let decision = tokio::select! {
        decision = decided => decision.ok(),
        () = stopped(cancel) => None,
    };
    lock(&state.tool_decisions).remove(&(reply, position));
    decision
}

/// The user's decision on a waiting call; false when no call waits there (it was stopped).
pub fn decide(state: &AppState, reply: MessageId, position: u32, decision: ToolDecisionInput) -> bool {
    match lock(&state.tool_decisions).remove(&(reply, position)) {
        Some(decide) => decide.send(decision).is_ok(),
        None => false,
    }
}

/// A tool's output as saved: its text (truncated by the host past its limit, with a note) and
/// its images as attachments.
async fn tool_result(store: &Store, tool: &str, output: confab_mcp::ToolOutput) -> Result<ToolResult, Failure> {
    let mut text = String::new();
    let mut images: Vec<AttachmentHash> = Vec::new();
    for part in output.parts {
        match part {
            OutputPart::Text(piece) => {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&piece);
            }
            OutputPart::Image { mime, data } => {
                let meta = AttachmentMeta { mime, original_name: Some(format!("{tool} result")), ..AttachmentMeta::default() };
                images.push(store.add_attachment_bytes(data, &meta).await?);
            }
        }
    }
    Ok(ToolResult { text, images, is_error: output.is_error })
}

/// One round of a reply as the template takes it: the text the model wrote before its calls,
/// and the calls with their results.
pub struct Round<'a> {
    pub content: &'a str,
    pub reasoning: Option<&'a str>,
    pub calls: Vec<&'a ToolCall>,
}

/// A reply's rounds, in order; the last one has no calls (the text after the last results).
pub fn rounds<'a>(message: &'a Message, calls: &'a [ToolCall]) -> Vec<Round<'a>> {
    let mut by_round: BTreeMap<u32, Vec<&ToolCall>> = BTreeMap::new();
    for call in calls {
        by_round.entry(call.round).or_default().push(call);
    }
    let reasoning = message.reasoning.as_deref().unwrap_or_default();
    let (mut content_at, mut reasoning_at) = (0, 0);
    let mut rounds = Vec::with_capacity(by_round.len() + 1);
    for calls in by_round.into_values() {
        let content_end = clamp(&message.content, calls[0].content_offset, content_at);
        let reasoning_end = clamp(reasoning, calls[0].reasoning_offset, reasoning_at);
        rounds.push(Round {
            content: &message.content[content_at..content_end],
            reasoning: Some(&reasoning[reasoning_at..reasoning_end]).filter(|r| !r.is_empty()),
            calls,
        });
        (content_at, reasoning_at) = (content_end, reasoning_end);
    }
    rounds.push(Round {
        content: &message.content[content_at..],
        reasoning: Some(&reasoning[reasoning_at..]).filter(|r| !r.is_empty()),
        calls: Vec::new(),
    });
    rounds
}

/// An offset the store recorded, kept inside the text and on a character boundary (it always
/// is, unless the text was edited since).
fn clamp(text: &str, offset: u64, from: usize) -> usize {
    let mut offset = usize::try_from(offset).unwrap_or(usize::MAX).clamp(from, text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// What the model is told a call gave: its result, its error, or why it did not run.
pub fn result_for_model(call: &ToolCall) -> String {
    match call.status {
        ToolCallStatus::Done => match &call.result {
            Some(result) if !result.text.is_empty() || !result.images.is_empty() => result.text.clone(),
            _ => "(the tool returned nothing)".into(),
        },
        ToolCallStatus::Failed => format!("Error: {}", call.error.as_deref().unwrap_or("the call failed")),
        ToolCallStatus::Denied => "The user did not allow this call.".into(),
        ToolCallStatus::Cancelled | ToolCallStatus::Interrupted | ToolCallStatus::Awaiting | ToolCallStatus::Running => {
            "The call was stopped before it finished.".into()
        }
    }
}

/// The stats of a reply written in rounds: the tokens generated (and canvases) in all of them; the prompt,
/// the cache and the speed of the latest; the time to the first token of the first.
pub fn add_stats(earlier: Option<ReplyStats>, latest: Option<ReplyStats>) -> Option<ReplyStats> {
    match (earlier, latest) {
        (Some(earlier), Some(latest)) => Some(ReplyStats {
            generated_tokens: earlier.generated_tokens + latest.generated_tokens,
            time_to_first_token_ms: earlier.time_to_first_token_ms.or(latest.time_to_first_token_ms),
            steps_per_canvas: [earlier.steps_per_canvas, latest.steps_per_canvas.clone()].concat(),
            ..latest
        }),
        (earlier, latest) => latest.or(earlier),
    }
}

/// The images a call's result holds.
pub fn result_images(call: &ToolCall) -> &[AttachmentHash] {
    call.result.as_ref().map_or(&[], |result| result.images.as_slice())
}

/// A saved call of `read` on `files` (tests of the code that reads rounds back).
#[cfg(test)]
pub fn sample_call(round: u32, position: u32, content_offset: u64, status: ToolCallStatus) -> ToolCall {
    ToolCall {
        message_id: MessageId(7),
        position,
        round,
        call_id: format!("call_{position}"),
        server: Some("files".into()),
        tool: "read".into(),
        arguments: "{}".into(),
        content_offset,
        reasoning_offset: 0,
        decision: ToolDecision::AllowedOnce,
        status,
        result: Some(ToolResult { text: "hello".into(), ..ToolResult::default() }),
        error: None,
        created_at: 0,
        started_at: None,
        ended_at: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use confab_store::{ConversationId, MessageStatus, Role};

    fn call(round: u32, position: u32, content_offset: u64, status: ToolCallStatus) -> ToolCall {
        sample_call(round, position, content_offset, status)
    }

    #[test]
    fn a_reply_splits_into_its_rounds_at_the_recorded_offsets() {
        let message = Message {
            id: MessageId(7),
            conversation_id: ConversationId(1),
            parent_id: None,
            role: Role::Assistant,
            content: "Let me look.Found it: é.".into(),
            reasoning: None,
            reasoning_ms: None,
            status: MessageStatus::Complete,
            error: None,
            created_at: 0,
            stats: None,
            tool_calls: vec![],
        };
        let calls = [call(0, 0, 12, ToolCallStatus::Done), call(0, 1, 12, ToolCallStatus::Denied), call(1, 2, 12, ToolCallStatus::Done)];
        let rounds = rounds(&message, &calls);
        let shape: Vec<(&str, usize)> = rounds.iter().map(|r| (r.content, r.calls.len())).collect();
        assert_eq!(shape, [("Let me look.", 2), ("", 1), ("Found it: é.", 0)]);
        assert_eq!(result_for_model(&calls[1]), "The user did not allow this call.");
        assert_eq!(clamp("é", 1, 0), 0, "never inside a character");
    }
}
