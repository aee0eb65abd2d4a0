import { forwardRef, memo, useCallback, useEffect, useImperativeHandle, useRef, useState, type KeyboardEvent } from 'react';
import { errorMessage, searchMessages, type ConversationId, type SearchHit } from '../ipc';
import { shortcutKeys, withShortcut } from '../lib/shortcuts';
import type { Conversations } from '../state/useConversations';
import { ConversationItem } from './ConversationItem';
import { SearchResults } from './SearchResults';
import { Icon } from './Icon';

export interface SidebarHandle {
  focusSearch: () => void;
}

interface Props {
  conversations: Conversations;
  selected: ConversationId | null;
  onOpen: (id: ConversationId) => void;
  onOpenHit: (hit: SearchHit) => void;
  onNewChat: () => void;
  onDelete: (id: ConversationId) => void;
  onError: (message: string) => void;
}

/** Waits this long after the last keystroke before searching (ms). */
const searchDelay = 200;

/** Conversations, newest first, a page at a time; or, while a query is typed, search hits. */
export const Sidebar = memo(
  forwardRef<SidebarHandle, Props>(function Sidebar({ conversations, selected, onOpen, onOpenHit, onNewChat, onDelete, onError }, ref) {
    const [query, setQuery] = useState('');
    const [hits, setHits] = useState<SearchHit[] | null>(null);
    const [searching, setSearching] = useState(false);
    const searchInput = useRef<HTMLInputElement>(null);
    const sentinel = useRef<HTMLDivElement>(null);
    // Roving focus: the chat list is one Tab stop, the row last focused (else the open chat, else the first).
    const [focusedRow, setFocusedRow] = useState<ConversationId | null>(null);
    const onFocusRow = useCallback((id: ConversationId) => setFocusedRow(id), []);
    const items = conversations.items;
    const tabbableRow = items.some((c) => c.id === focusedRow)
      ? focusedRow
      : items.some((c) => c.id === selected)
        ? selected
        : (items[0]?.id ?? null);
    const onListKey = (event: KeyboardEvent<HTMLUListElement>) => {
      if (!['ArrowDown', 'ArrowUp', 'Home', 'End'].includes(event.key)) return;
      if (event.target instanceof HTMLInputElement) return;
      const rows = Array.from(event.currentTarget.querySelectorAll<HTMLElement>('.conversation-open'));
      if (rows.length === 0) return;
      const current = (event.target as HTMLElement).closest('li')?.querySelector<HTMLElement>('.conversation-open');
      const at = current ? rows.indexOf(current) : -1;
      const next =
        event.key === 'Home'
          ? 0
          : event.key === 'End'
            ? rows.length - 1
            : event.key === 'ArrowDown'
              ? Math.min(rows.length - 1, at + 1)
              : Math.max(0, at - 1);
      event.preventDefault();
      rows[next]?.focus();
    };

    useImperativeHandle(ref, () => ({
      focusSearch: () => {
        searchInput.current?.focus();
        searchInput.current?.select();
      },
    }));

    useEffect(() => {
      const trimmed = query.trim();
      if (!trimmed) {
        setHits(null);
        setSearching(false);
        return;
      }
      let live = true;
      setSearching(true);
      const timer = setTimeout(() => {
        searchMessages(trimmed)
          .then((found) => live && setHits(found))
          .catch((e: unknown) => {
            if (!live) return;
            setHits([]);
            onError(`Search failed: ${errorMessage(e)}`);
          })
          .finally(() => live && setSearching(false));
      }, searchDelay);
      return () => {
        live = false;
        clearTimeout(timer);
      };
    }, [query, onError]);

    // Loads the next page as the end of the list scrolls into view.
    const { hasMore, loadMore } = conversations;
    useEffect(() => {
      const element = sentinel.current;
      if (!element || !hasMore || typeof IntersectionObserver === 'undefined') return;
      const observer = new IntersectionObserver((entries) => {
        if (entries.some((entry) => entry.isIntersecting)) loadMore();
      });
      observer.observe(element);
      return () => observer.disconnect();
    }, [hasMore, loadMore]);

    const searchActive = query.trim() !== '';
    return (
      <aside className="sidebar" data-testid="sidebar">
        <div className="sidebar-top">
          <button type="button" className="new-chat" data-testid="new-chat" onClick={onNewChat} title={withShortcut('New chat', 'newChat')}>
            <Icon name="plus" size={16} /> New chat
          </button>
          <input
            ref={searchInput}
            type="search"
            className="search-input"
            data-testid="search-input"
            placeholder={withShortcut('Search', 'search')}
            aria-label="Search messages"
            value={query}
            onChange={(event) => setQuery(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === 'Escape' && query) {
                event.stopPropagation();
                setQuery('');
              }
            }}
          />
        </div>
        <nav className="sidebar-list" aria-label="Conversations">
          {searchActive ? (
            <SearchResults hits={hits} searching={searching} onOpen={onOpenHit} />
          ) : !conversations.loaded ? (
            <p className="sidebar-empty muted">Loading…</p>
          ) : conversations.items.length === 0 ? (
            <p className="sidebar-empty muted">No chats yet. Start one with New chat ({shortcutKeys('newChat')}).</p>
          ) : (
            <>
              <ul className="conversation-list" onKeyDown={onListKey}>
                {conversations.items.map((conversation) => (
                  <ConversationItem
                    key={conversation.id}
                    conversation={conversation}
                    selected={conversation.id === selected}
                    tabbable={conversation.id === tabbableRow}
                    onFocusRow={onFocusRow}
                    onOpen={onOpen}
                    onRename={conversations.rename}
                    onDelete={onDelete}
                  />
                ))}
              </ul>
              {conversations.hasMore && (
                <div ref={sentinel} className="load-more">
                  <button
                    type="button"
                    className="ghost small"
                    data-testid="load-more"
                    disabled={conversations.loadingMore}
                    onClick={loadMore}
                  >
                    {conversations.loadingMore ? 'Loading…' : 'Load more'}
                  </button>
                </div>
              )}
            </>
          )}
        </nav>
      </aside>
    );
  }),
);
