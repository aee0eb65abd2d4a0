// The sidebar's list: newest first, loaded a page at a time, kept in step with what the app
// and the backend (background titles) change.
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import {
  deleteConversation,
  listConversations,
  onConversationUpdated,
  renameConversation,
  type Conversation,
  type ConversationCursor,
  type ConversationId,
} from '../ipc';

const pageSize = 200;

export interface Conversations {
  items: Conversation[];
  /** Null until the first page arrives. */
  loaded: boolean;
  hasMore: boolean;
  loadingMore: boolean;
  loadMore: () => void;
  /** Puts a conversation (new or changed) at the top. */
  touch: (conversation: Conversation) => void;
  /** Puts the conversation as the backend returned it in place of the list's entry. */
  replace: (conversation: Conversation) => void;
  rename: (id: ConversationId, title: string) => Promise<void>;
  /** False if the chat could not be deleted (the error is shown). */
  remove: (id: ConversationId) => Promise<boolean>;
}

export function useConversations(onError: (message: string) => void): Conversations {
  const [items, setItems] = useState<Conversation[]>([]);
  const [loaded, setLoaded] = useState(false);
  const [next, setNext] = useState<ConversationCursor | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const loadingRef = useRef(false);

  const fetchPage = useCallback(
    (cursor: ConversationCursor | null) => {
      if (loadingRef.current) return;
      loadingRef.current = true;
      setLoadingMore(true);
      listConversations(cursor, pageSize)
        .then((page) => {
          setItems((previous) => {
            // A conversation touched while the page was in flight stays where it is.
            const known = new Set(previous.map((c) => c.id));
            return [...previous, ...page.conversations.filter((c) => !known.has(c.id))];
          });
          setNext(page.next);
          setLoaded(true);
        })
        .catch((e: unknown) => onError(`Could not load conversations: ${(e as Error).message}`))
        .finally(() => {
          loadingRef.current = false;
          setLoadingMore(false);
        });
    },
    [onError],
  );

  useEffect(() => fetchPage(null), [fetchPage]);

  /** Moves a conversation to the top with its new time; the rest of the entry (a title the
   *  backend just sent) is kept as the list has it. */
  const touch = useCallback((conversation: Conversation) => {
    setItems((previous) => {
      const current = previous.find((c) => c.id === conversation.id) ?? conversation;
      const moved = { ...current, updated_at: conversation.updated_at };
      return [moved, ...previous.filter((c) => c.id !== conversation.id)];
    });
  }, []);

  const replace = useCallback((conversation: Conversation) => {
    setItems((previous) => previous.map((c) => (c.id === conversation.id ? conversation : c)));
  }, []);

  // Background updates (the auto-title) change the entry in place, without reordering.
  useEffect(() => {
    let unlisten: (() => void) | null = null;
    let live = true;
    onConversationUpdated((conversation) => {
      setItems((previous) =>
        previous.some((c) => c.id === conversation.id)
          ? previous.map((c) => (c.id === conversation.id ? conversation : c))
          : [conversation, ...previous],
      );
    })
      .then((stop) => (live ? (unlisten = stop) : stop()))
      .catch(() => {
        /* No event bridge outside Tauri (tests, a plain browser). */
      });
    return () => {
      live = false;
      unlisten?.();
    };
  }, []);

  const rename = useCallback(
    async (id: ConversationId, title: string) => {
      try {
        const stored = await renameConversation(id, title);
        setItems((previous) => previous.map((c) => (c.id === id ? { ...c, title: stored } : c)));
      } catch (e) {
        onError(`Could not rename: ${(e as Error).message}`);
      }
    },
    [onError],
  );

  /** Deletes a chat (the backend stops its reply first); false, with the error shown, if it could not. */
  const remove = useCallback(
    async (id: ConversationId): Promise<boolean> => {
      try {
        await deleteConversation(id);
        setItems((previous) => previous.filter((c) => c.id !== id));
        return true;
      } catch (e) {
        onError(`Could not delete: ${(e as Error).message}`);
        return false;
      }
    },
    [onError],
  );

  const loadMore = useCallback(() => {
    if (next) fetchPage(next);
  }, [fetchPage, next]);

  const hasMore = next !== null;
  // One object per change, so that the (memoised) sidebar skips renders while a reply streams.
  return useMemo(
    () => ({ items, loaded, hasMore, loadingMore, loadMore, touch, replace, rename, remove }),
    [items, loaded, hasMore, loadingMore, loadMore, touch, replace, rename, remove],
  );
}
