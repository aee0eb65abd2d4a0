import { memo, useRef, useState } from 'react';
import type { Conversation, ConversationId } from '../ipc';
import { shortDate } from '../lib/format';
import { Icon } from './Icon';

interface Props {
  conversation: Conversation;
  selected: boolean;
  onOpen: (id: ConversationId) => void;
  onRename: (id: ConversationId, title: string) => void;
  onDelete: (id: ConversationId) => void;
}

/** One row of the sidebar; renames inline, and deletes on a second, confirming click. */
export const ConversationItem = memo(function ConversationItem({ conversation, selected, onOpen, onRename, onDelete }: Props) {
  const [renaming, setRenaming] = useState(false);
  // Enter and the blur that may follow both end the rename: only the first one counts.
  const renameOpen = useRef(false);
  const [draft, setDraft] = useState(conversation.title);
  const [confirmingDelete, setConfirmingDelete] = useState(false);
  const title = conversation.title || 'New chat';

  const startRename = () => {
    setDraft(conversation.title);
    renameOpen.current = true;
    setRenaming(true);
  };

  const cancelRename = () => {
    renameOpen.current = false;
    setRenaming(false);
  };

  const commitRename = () => {
    if (!renameOpen.current) return;
    renameOpen.current = false;
    setRenaming(false);
    // An empty title goes to the backend too, which says why it is refused.
    const next = draft.trim();
    if (next !== conversation.title) onRename(conversation.id, next);
  };

  return (
    <li
      className={`conversation-item${selected ? ' selected' : ''}`}
      data-testid="conversation-item"
      data-id={conversation.id}
      aria-current={selected ? 'true' : undefined}
    >
      {renaming ? (
        <input
          className="rename-input"
          data-testid="rename-input"
          aria-label="Conversation title"
          value={draft}
          autoFocus
          onChange={(event) => setDraft(event.target.value)}
          onBlur={commitRename}
          onKeyDown={(event) => {
            if (event.key === 'Enter') commitRename();
            else if (event.key === 'Escape') {
              event.stopPropagation();
              cancelRename();
            }
          }}
        />
      ) : (
        <button type="button" className="conversation-open" onClick={() => onOpen(conversation.id)} title={title}>
          <span className="conversation-title" data-testid="conversation-title">
            {title}
          </span>
          <span className="conversation-date">{shortDate(conversation.updated_at)}</span>
        </button>
      )}
      {!renaming && (
        <span className={`conversation-actions${confirmingDelete ? ' confirming' : ''}`}>
          {confirmingDelete ? (
            <>
              <button type="button" className="ghost small" onClick={() => setConfirmingDelete(false)}>
                Cancel
              </button>
              <button
                type="button"
                className="danger small"
                data-testid="delete-button"
                aria-label="Confirm delete"
                onClick={() => {
                  setConfirmingDelete(false);
                  onDelete(conversation.id);
                }}
              >
                Delete?
              </button>
            </>
          ) : (
            <>
              <button
                type="button"
                className="ghost small"
                data-testid="rename-button"
                aria-label="Rename"
                title="Rename"
                onClick={startRename}
              >
                <Icon name="pencil" size={14} />
              </button>
              <button
                type="button"
                className="ghost small"
                data-testid="delete-button"
                aria-label="Delete"
                title="Delete"
                onClick={() => setConfirmingDelete(true)}
              >
                <Icon name="trash" size={14} />
              </button>
            </>
          )}
        </span>
      )}
    </li>
  );
});
