import type { ContextUse } from '../ipc';
import { contextVerdict, tokenCount } from '../lib/context';

/** "1,234 / 8,192 tokens" under the message box: the chat and the draft against the context. */
export function ContextMeter({ use }: { use: ContextUse }) {
  const verdict = contextVerdict(use);
  const label = `${tokenCount(use.used)} / ${tokenCount(use.context)} tokens`;
  return (
    <div className={`context-meter ${verdict}`} data-testid="context-meter" data-verdict={verdict}>
      <meter
        min={0}
        max={use.context}
        value={Math.min(use.used, use.context)}
        low={use.limit * 0.75}
        high={use.limit}
        optimum={0}
        aria-label={`Context used: ${label}`}
      />
      <span title="The chat so far and your message, against what the model reads at once">{label}</span>
    </div>
  );
}

interface WarningProps {
  use: ContextUse;
  /** Opens a new chat; the draft stays in the box. */
  onNewChat: () => void;
  /** Sends as it is: the engine leaves the oldest messages out to make room. */
  onSendAnyway: () => void;
  /** Names of the documents attached to the draft: they go in whole, so they may be why it is too long. */
  documents?: string[];
}

/** Shown when the draft would not fit, before anything is sent, with what can be done. */
export function ContextWarning({ use, onNewChat, onSendAnyway, documents = [] }: WarningProps) {
  const verdict = contextVerdict(use);
  if (verdict === 'fits') return null;
  const reads = `${tokenCount(use.limit)} tokens at most, keeping room for its reply`;
  return (
    <div className="context-warning" role="alert" data-testid="context-warning" data-verdict={verdict}>
      {verdict === 'too-long' && documents.length > 0 ? (
        <p data-testid="document-too-long">
          This message with {documents.join(', ')} is about {tokenCount(use.alone)} tokens: the{' '}
          {documents.length === 1 ? 'document does' : 'documents do'} not fit the model, which reads {reads}. Documents go in whole;
          searching in a larger one is not available yet. Attach a shorter document or the part you need, or load a model with a longer
          context.
        </p>
      ) : verdict === 'too-long' ? (
        <p>
          This message is about {tokenCount(use.alone)} tokens: too long for the model, which reads {reads}. Shorten it or send it in parts.
        </p>
      ) : (
        <>
          <p>
            This chat and your message come to about {tokenCount(use.used)} tokens, more than the model reads ({reads}).
          </p>
          <div className="context-warning-actions">
            <button type="button" className="ghost small" data-testid="context-new-chat" onClick={onNewChat}>
              New chat with this message
            </button>
            <button type="button" className="ghost small" data-testid="context-send-anyway" onClick={onSendAnyway}>
              Send, leaving out the oldest messages
            </button>
          </div>
        </>
      )}
    </div>
  );
}
