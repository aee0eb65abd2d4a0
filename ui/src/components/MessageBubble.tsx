import { Fragment, memo, useState } from 'react';
import type { AnyPlan, CanvasUpdate, Message, MessageId, MessageView, QueueReason, ReplySource, StopReason } from '../ipc';
import { replySegments, toolCallsOf } from '../lib/toolCalls';
import { AttachmentPreview } from './AttachmentPreview';
import { FormingCanvas } from './Canvas';
import { CopyButton } from './CopyButton';
import { Markdown } from './Markdown';
import { PlanLine, ReplyStats } from './ReplyStats';
import { Reasoning } from './Reasoning';
import { SiblingSwitcher } from './SiblingSwitcher';
import { Sources } from './Sources';
import { ToolCallCard } from './ToolCallCard';

interface Props {
  view: MessageView;
  plan: AnyPlan | undefined;
  /** The canvas a denoising model is writing into this reply, as its latest step left it. */
  canvas?: CanvasUpdate;
  /** This streaming reply waits to start (for memory, or a free row). */
  queued?: { reason: QueueReason; ahead: number };
  /** A reply is streaming somewhere: actions that start another wait. */
  busy: boolean;
  onRegenerate: (reply: MessageId) => void;
  /** Set on the last message: a stopped or interrupted reply offers Continue. */
  onContinue?: (reply: MessageId) => void;
  onEdit: (message: MessageId, text: string) => void;
  onSelectSibling: (message: MessageId) => void;
  /** Opens one of a reply's sources beside the chat. */
  onOpenSource?: (source: ReplySource) => void;
}

const statusLabels: Partial<Record<string, string>> = {
  stopped: 'Stopped',
  error: 'Error',
  interrupted: 'Interrupted',
};

/** A finished reply the model did not end itself: what cut it, said where a status would be. */
const cutLabels: Partial<Record<StopReason, string>> = {
  token_limit: 'Cut at the token limit (Settings › Chat › Max tokens)',
  context_full: "Cut: the model's context is full",
};

/** Why a complete reply was cut short, or null when the model ended it (or it is not complete). */
export function cutBy(message: Message): StopReason | null {
  const reason = message.status === 'complete' ? (message.stats?.stop_reason ?? null) : null;
  return reason && cutLabels[reason] ? reason : null;
}

/** Continue writes more of a reply that was stopped, interrupted or cut by the token limit, once it
 *  has something to go on from: text, or (cut while thinking) its reasoning. */
export function canContinue(message: Message): boolean {
  const unfinished = message.status === 'stopped' || message.status === 'interrupted' || cutBy(message) === 'token_limit';
  return unfinished && (message.content.trim() !== '' || (message.reasoning ?? '').trim() !== '');
}

/** One message: the user's as plain text, the assistant's as markdown, with their actions. */
export const MessageBubble = memo(function MessageBubble({
  view,
  plan,
  canvas,
  queued,
  busy,
  onRegenerate,
  onContinue,
  onEdit,
  onSelectSibling,
  onOpenSource,
}: Props) {
  const { message, attachments, siblings, sources } = view;
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(message.content);
  const isUser = message.role === 'user';
  const streaming = message.status === 'streaming';
  const finished = !streaming;
  const cut = cutBy(message);
  const badge = cut ? cutLabels[cut] : statusLabels[message.status];
  const continuable = onContinue && canContinue(message);

  const saveEdit = () => {
    const text = draft.trim();
    if (!text) return;
    setEditing(false);
    onEdit(message.id, text);
  };

  return (
    <article
      className={`message ${isUser ? 'from-user' : 'from-assistant'}`}
      data-testid="message"
      data-role={message.role}
      data-status={message.status}
      // None until saved (drawn at Enter under a provisional id; see useChat).
      data-id={message.id > 0 ? message.id : undefined}
    >
      {attachments.length > 0 && (
        <div className="message-attachments">
          {attachments.map((attachment) => (
            <AttachmentPreview key={attachment.hash} attachment={attachment} />
          ))}
        </div>
      )}
      {editing ? (
        <div className="edit-box">
          <textarea
            data-testid="edit-input"
            value={draft}
            autoFocus
            rows={Math.min(10, Math.max(2, draft.split('\n').length))}
            onChange={(event) => setDraft(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
                event.preventDefault();
                saveEdit();
              } else if (event.key === 'Escape') {
                event.stopPropagation();
                setEditing(false);
              }
            }}
          />
          <div className="edit-actions">
            <button type="button" className="ghost" onClick={() => setEditing(false)}>
              Cancel
            </button>
            <button type="button" className="primary" data-testid="edit-save" disabled={busy || !draft.trim()} onClick={saveEdit}>
              Save &amp; send
            </button>
          </div>
        </div>
      ) : (
        <div className="bubble">
          {!isUser && message.reasoning && toolCallsOf(message).length === 0 && (
            <Reasoning
              text={message.reasoning}
              ms={message.reasoning_ms}
              thinking={streaming && !message.content}
              // Cut by the token limit before any answer: the reasoning is all there is to read, and
              // Continue goes on with it. (A full context folds it as an ended reply does.)
              keepOpen={cut === 'token_limit' && !message.content}
            />
          )}
          <div className="message-content" data-testid="message-content">
            {isUser ? <p className="plain-text">{message.content}</p> : <ReplyContent message={message} streaming={streaming} />}
          </div>
          {streaming && canvas && <FormingCanvas canvas={canvas} />}
          {/* A status, not the reply's text: outside its content. */}
          {!isUser && !message.content && !message.reasoning && !canvas && toolCallsOf(message).length === 0 && streaming && (
            <span className="typing muted" role="status" data-testid="reply-status">
              {queued ? queuedText(queued.reason, queued.ahead) : 'Writing…'}
            </span>
          )}
          {!isUser && sources && sources.length > 0 && onOpenSource && <Sources sources={sources} onOpen={onOpenSource} />}
          {badge && (
            <div className={`status-badge status-${cut ? 'cut' : message.status}`} data-testid="status-badge" data-cut={cut ?? undefined}>
              {badge}
              {(message.status === 'error' || message.status === 'interrupted') && message.error ? `: ${message.error}` : ''}
            </div>
          )}
        </div>
      )}
      {!editing && (
        <footer className="message-actions">
          {siblings.ids.length > 1 && <SiblingSwitcher siblings={siblings} disabled={busy} onSelect={onSelectSibling} />}
          {finished && <CopyButton text={() => message.content} testId="copy-button" />}
          {isUser && (
            <button
              type="button"
              className="ghost small"
              data-testid="edit-button"
              disabled={busy}
              onClick={() => {
                setDraft(message.content);
                setEditing(true);
              }}
            >
              Edit
            </button>
          )}
          {continuable && (
            <button
              type="button"
              className="ghost small"
              data-testid="continue-button"
              title="Write more of this reply"
              disabled={busy}
              onClick={() => onContinue(message.id)}
            >
              Continue
            </button>
          )}
          {!isUser && finished && (
            <button
              type="button"
              className="ghost small"
              data-testid="regenerate-button"
              disabled={busy}
              onClick={() => onRegenerate(message.id)}
            >
              Regenerate
            </button>
          )}
        </footer>
      )}
      {!isUser && finished && message.stats && <ReplyStats stats={message.stats} />}
      {plan && !isUser && <PlanLine plan={plan} />}
    </article>
  );
});

/** A reply's text as markdown; one that called tools is drawn round by round: its reasoning and
 *  text, then the cards of the calls it made there, then the next round's. (A reply without
 *  calls has its reasoning drawn above, by the bubble.) */
function ReplyContent({ message, streaming }: { message: Message; streaming: boolean }) {
  const rounds = toolCallsOf(message).length > 0;
  const segments = replySegments(message.content, rounds ? (message.reasoning ?? '') : '', toolCallsOf(message));
  return segments.map((segment, index) => {
    const current = streaming && index === segments.length - 1;
    return (
      // Rounds only grow at the end: their index is a stable key.
      <Fragment key={index}>
        {segment.reasoning && (
          // How long it thought is known for the whole reply only: said once, on the first.
          <Reasoning text={segment.reasoning} ms={index === 0 ? message.reasoning_ms : null} thinking={current && !segment.text} />
        )}
        {segment.text && <Markdown text={segment.text} streaming={current} />}
        {segment.calls.map((call) => (
          <ToolCallCard key={call.position} call={call} />
        ))}
      </Fragment>
    );
  });
}

/** What a reply that waits to start says, in place of "Writing…". */
export function queuedText(reason: QueueReason, ahead: number): string {
  const before = ahead > 0 ? ` (${ahead} ${ahead === 1 ? 'reply' : 'replies'} before it)` : '';
  return reason === 'memory'
    ? `Waiting for memory: the replies running now hold what Settings › Storage › Memory for replies allows${before}…`
    : `Waiting for a free slot: other replies are running${before}…`;
}
