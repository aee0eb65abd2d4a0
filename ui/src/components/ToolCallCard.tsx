// A tool call in a reply: which tool, with what, whether it may run, and what it gave. The
// arguments and the result come from the model and the tool: untrusted, so they are shown as
// plain text in <pre>, never as markdown or HTML.
import { useState } from 'react';
import { decideToolCall, errorMessage, type ToolCall, type ToolDecisionInput } from '../ipc';
import { argumentsText, callOutcome, needsDecision, ranWithoutAsking, statusWords } from '../lib/toolCalls';
import { useAttachmentUrl } from '../state/useAttachmentUrl';
import { Icon } from './Icon';

const decisions: { decision: ToolDecisionInput; label: string; testId: string; title: string }[] = [
  { decision: 'once', label: 'Allow once', testId: 'tool-allow-once', title: 'Run this call' },
  {
    decision: 'always',
    label: 'Always allow',
    testId: 'tool-allow-always',
    title: 'Run this call, and later calls of this tool without asking (Settings › Tools takes it back)',
  },
  { decision: 'deny', label: 'Deny', testId: 'tool-deny', title: 'Do not run it; the model is told so' },
];

export function ToolCallCard({ call }: { call: ToolCall }) {
  // The answer sent, until the call's next state arrives (its buttons go then).
  const [sent, setSent] = useState<ToolDecisionInput | null>(null);
  const [error, setError] = useState<string | null>(null);
  const outcome = callOutcome(call);
  const asking = needsDecision(call);

  const decide = (decision: ToolDecisionInput) => {
    setSent(decision);
    setError(null);
    decideToolCall(call.message_id, call.position, decision).catch((e: unknown) => {
      setSent(null);
      setError(errorMessage(e));
    });
  };

  const hasResult = outcome.text !== null || outcome.images.length > 0 || outcome.failure !== null;
  return (
    <div className={`tool-card tool-${call.status}`} data-testid="tool-card" data-status={call.status} data-position={call.position}>
      <div className="tool-card-head">
        <Icon name="wrench" size={14} />
        <strong className="tool-card-name">{call.tool}</strong>
        {call.server && <span className="muted">on {call.server}</span>}
        <span className="tool-card-status" data-testid="tool-card-status">
          {statusWords[call.status]}
          {ranWithoutAsking(call) ? ' (allowed always)' : ''}
        </span>
      </div>
      <pre className="tool-card-args" data-testid="tool-card-args">
        {argumentsText(call)}
      </pre>
      {asking && (
        <div className="tool-card-actions" role="group" aria-label={`Run ${call.tool}?`}>
          {decisions.map(({ decision, label, testId, title }) => (
            <button
              key={decision}
              type="button"
              className={decision === 'once' ? 'primary small' : 'small'}
              data-testid={testId}
              title={title}
              disabled={sent !== null}
              onClick={() => decide(decision)}
            >
              {label}
            </button>
          ))}
        </div>
      )}
      {error && (
        <p className="tool-card-error" role="alert">
          {error}
        </p>
      )}
      {hasResult && (
        <details className="tool-card-result" data-testid="tool-card-result">
          <summary>
            {outcome.failure !== null ? 'Why it failed' : outcome.toolError ? 'Result (the tool reported an error)' : 'Result'}
          </summary>
          {outcome.failure !== null && <pre className="tool-card-failure">{outcome.failure}</pre>}
          {outcome.text !== null && outcome.text !== '' && <pre>{outcome.text}</pre>}
          {outcome.images.length > 0 && (
            <div className="tool-card-images">
              {outcome.images.map((hash) => (
                <ResultImage key={hash} hash={hash} tool={call.tool} />
              ))}
            </div>
          )}
        </details>
      )}
    </div>
  );
}

/** An image a tool returned, saved as an attachment. The call keeps only its hash: PNG is
 *  assumed for the blob, which browsers sniff past for other raster formats. */
function ResultImage({ hash, tool }: { hash: string; tool: string }) {
  const url = useAttachmentUrl(hash, 'image/png');
  return url ? (
    <img className="tool-card-image" src={url} alt={`Image from ${tool}`} data-testid="tool-card-image" />
  ) : (
    <span className="muted small">Loading image…</span>
  );
}
