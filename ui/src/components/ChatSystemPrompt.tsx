// The open chat's own system prompt, beside the one in Settings: kept with the conversation and
// sent in place of the Settings one; emptied, the chat goes back to the Settings one.
import { useEffect, useId, useRef, useState } from 'react';
import { errorMessage, setSystemPrompt, type Conversation } from '../ipc';

interface Props {
  conversation: Conversation;
  /** The system prompt in Settings, shown as what the chat uses when it has none. */
  globalPrompt: string;
  onSaved: (conversation: Conversation) => void;
}

export function ChatSystemPrompt({ conversation, globalPrompt, onSaved }: Props) {
  const [open, setOpen] = useState(false);
  const [draft, setDraft] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const panel = useRef<HTMLDivElement>(null);
  const fieldId = useId();
  const own = conversation.system_prompt;

  // Another chat opened: close, so a draft is never saved to the wrong one.
  useEffect(() => setOpen(false), [conversation.id]);

  const save = async (prompt: string) => {
    setSaving(true);
    setError(null);
    try {
      onSaved(await setSystemPrompt(conversation.id, prompt));
      setOpen(false);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setSaving(false);
    }
  };

  return (
    <div className="chat-prompt" ref={panel}>
      <button
        type="button"
        className={`ghost small${own ? ' accent' : ''}`}
        data-testid="chat-prompt-button"
        aria-expanded={open}
        title={own ? `This chat's system prompt: ${own}` : 'This chat uses the system prompt in Settings'}
        onClick={() => {
          setDraft(own ?? '');
          setError(null);
          setOpen(!open);
        }}
      >
        {own ? 'Chat prompt (own)' : 'Chat prompt'}
      </button>
      {open && (
        <div
          className="popover chat-prompt-panel"
          role="dialog"
          aria-label="This chat's system prompt"
          data-testid="chat-prompt-panel"
          onKeyDown={(event) => {
            if (event.key !== 'Escape') return;
            event.stopPropagation();
            setOpen(false);
          }}
        >
          <label htmlFor={fieldId}>This chat's system prompt</label>
          <textarea
            id={fieldId}
            rows={4}
            autoFocus
            data-testid="chat-prompt-field"
            placeholder={globalPrompt ? `Empty: the one in Settings (“${globalPrompt}”)` : 'Empty: the one in Settings (none set)'}
            value={draft}
            onChange={(event) => setDraft(event.target.value)}
          />
          <p className="field-hint muted">Sent before this chat only, in place of the one in Settings.</p>
          {error && (
            <p className="error-text" role="alert">
              {error}
            </p>
          )}
          <div className="chat-prompt-actions">
            {own && (
              <button type="button" className="ghost small" data-testid="chat-prompt-clear" disabled={saving} onClick={() => void save('')}>
                Use the one in Settings
              </button>
            )}
            <button
              type="button"
              className="primary small"
              data-testid="chat-prompt-save"
              disabled={saving}
              onClick={() => void save(draft)}
            >
              Save
            </button>
          </div>
        </div>
      )}
    </div>
  );
}
