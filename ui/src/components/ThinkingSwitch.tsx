// The chat's thinking switch, for a model whose template can turn its reasoning off
// (`enable_thinking`): off, the model answers at once. An open chat keeps it (set_thinking); a
// chat not made yet takes it with its first message.
import { useState } from 'react';
import { errorMessage, setThinking, type Conversation } from '../ipc';

interface Props {
  /** The open chat; undefined for a new one. */
  conversation: Conversation | undefined;
  /** The switch for a new chat. */
  newChatOn: boolean;
  onNewChatChange: (on: boolean) => void;
  onSaved: (conversation: Conversation) => void;
  onError: (message: string) => void;
}

export function ThinkingSwitch({ conversation, newChatOn, onNewChatChange, onSaved, onError }: Props) {
  const [saving, setSaving] = useState(false);
  const on = conversation ? conversation.thinking : newChatOn;

  const change = (next: boolean) => {
    if (!conversation) {
      onNewChatChange(next);
      return;
    }
    setSaving(true);
    setThinking(conversation.id, next)
      .then(onSaved, (e: unknown) => onError(`Could not change this chat's thinking: ${errorMessage(e)}`))
      .finally(() => setSaving(false));
  };

  return (
    <label
      className="thinking-switch"
      title={on ? 'The model thinks before it answers in this chat' : 'The model answers at once in this chat, without thinking'}
    >
      <input
        type="checkbox"
        role="switch"
        data-testid="thinking-switch"
        checked={on}
        disabled={saving}
        onChange={(event) => change(event.target.checked)}
      />
      Thinking
    </label>
  );
}
