import { memo, useEffect, useRef, useState, type KeyboardEvent } from 'react';
import type { Conversation, ConversationId } from '../ipc';
import { shortDate } from '../lib/format';
import { withShortcut } from '../lib/shortcuts';
import { Icon } from './Icon';

interface Props {
  conversation: Conversation;
  selected: boolean;
  /** The one row of the list that Tab stops on (roving focus: arrows move between rows). */
  tabbable: boolean;
  onFocusRow: (id: ConversationId) => void;
  onOpen: (id: ConversationId) => void;
  onRename: (id: ConversationId, title: string) => void;
  onDelete: (id: ConversationId) => void;
}

/**
 * One row of the sidebar; renames inline, and deletes on a second, confirming click. One Tab stop:
 * its actions are reached with → / ← or the Menu key, F2 renames and Delete asks to delete.
 */
export const ConversationItem = memo(function ConversationItem({
  conversation,
  selected,
  tabbable,
  onFocusRow,
  onOpen,
  onRename,
  onDelete,
}: Props) {
  const [renaming, setRenaming] = useState(false);
  // Enter and the blur that may follow both end the rename: only the first one counts.
  const renameOpen = useRef(false);
  const [draft, setDraft] = useState(conversation.title);
  const [confirmingDelete, setConfirmingDelete] = useState(false);
  const title = conversation.title || 'New chat';
  const row = useRef<HTMLLIElement>(null);
  // Where focus goes once the row has drawn its next state (after a key or a click, not a blur).
  const focusNext = useRef<'open' | 'confirm' | null>(null);
  useEffect(() => {
    const target = focusNext.current;
    focusNext.current = null;
    if (target === 'open') row.current?.querySelector<HTMLElement>('.conversation-open')?.focus();
    else if (target === 'confirm') row.current?.querySelector<HTMLElement>('[aria-label="Confirm delete"]')?.focus();
  }, [renaming, confirmingDelete]);

  const startRename = () => {
    setDraft(conversation.title);
    renameOpen.current = true;
    setRenaming(true);
  };

  const cancelRename = () => {
    focusNext.current = 'open';
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

  const askDelete = () => {
    focusNext.current = 'confirm';
    setConfirmingDelete(true);
  };
  const cancelDelete = () => {
    focusNext.current = 'open';
    setConfirmingDelete(false);
  };

  // The row's buttons, one after another on → / ← (or the Menu key); none of them a Tab stop but the first.
  const onKeyDown = (event: KeyboardEvent<HTMLLIElement>) => {
    if (renaming) return;
    const buttons = Array.from(row.current?.querySelectorAll<HTMLElement>('button') ?? []);
    const at = buttons.indexOf(event.target as HTMLElement);
    const onOpenButton = (event.target as HTMLElement).classList.contains('conversation-open');
    let next: number | null = null;
    if (event.key === 'ArrowRight' || event.key === 'ContextMenu' || (event.key === 'F10' && event.shiftKey)) next = at + 1;
    else if (event.key === 'ArrowLeft') next = at - 1;
    else if (event.key === 'F2' && onOpenButton) startRename();
    else if (event.key === 'Delete' && onOpenButton) askDelete();
    else if (event.key === 'Escape' && confirmingDelete) {
      event.stopPropagation();
      cancelDelete();
    } else return;
    event.preventDefault();
    if (next !== null && buttons.length > 0) buttons[Math.max(0, Math.min(buttons.length - 1, next))]?.focus();
  };

  return (
    <li
      ref={row}
      onKeyDown={onKeyDown}
      onFocus={() => onFocusRow(conversation.id)}
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
            if (event.key === 'Enter') {
              focusNext.current = 'open';
              commitRename();
            } else if (event.key === 'Escape') {
              event.stopPropagation();
              cancelRename();
            }
          }}
        />
      ) : (
        <button
          type="button"
          className="conversation-open"
          tabIndex={tabbable ? 0 : -1}
          onClick={() => onOpen(conversation.id)}
          title={title}
        >
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
              <button type="button" className="ghost small" tabIndex={-1} onClick={cancelDelete}>
                Cancel
              </button>
              <button
                type="button"
                className="danger small"
                data-testid="delete-button"
                tabIndex={-1}
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
                tabIndex={-1}
                aria-label="Rename"
                title={withShortcut('Rename', 'rowRename')}
                onClick={startRename}
              >
                <Icon name="pencil" size={14} />
              </button>
              <button
                type="button"
                className="ghost small"
                data-testid="delete-button"
                tabIndex={-1}
                aria-label="Delete"
                title={withShortcut('Delete', 'rowDelete')}
                onClick={askDelete}
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
