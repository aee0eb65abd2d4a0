// The open conversation: its current branch, and the reply streaming into it.
import { useCallback, useRef, useState } from 'react';
import {
  continueReply,
  conversationMessages,
  createConversation,
  editMessage,
  errorMessage,
  regenerate,
  replyShown,
  selectBranch,
  sendMessage,
  stopReply,
  type Conversation,
  type ConversationId,
  type Message,
  type MessageId,
  type MessageView,
  type AnyPlan,
  type ReplyEvent,
  type ReplyHandler,
} from '../ipc';

export interface Streaming {
  conversation: ConversationId;
  /** Null until the backend has saved the user's message and started the reply. */
  replyId: MessageId | null;
}

export interface Chat {
  conversationId: ConversationId | null;
  messages: MessageView[];
  loading: boolean;
  streaming: Streaming | null;
  /** What each reply reused, as its plan said (kept for this session only). */
  plans: ReadonlyMap<MessageId, AnyPlan>;
  open: (id: ConversationId | null) => void;
  /** Resolves true once the message is saved (the composer can let go of its text). */
  send: (text: string, attachments: string[]) => Promise<boolean>;
  regenerate: (reply: MessageId) => Promise<boolean>;
  /** More of a stopped or interrupted reply, in the same message. */
  continueReply: (reply: MessageId) => Promise<boolean>;
  edit: (message: MessageId, text: string) => Promise<boolean>;
  stop: () => void;
  selectSibling: (message: MessageId) => void;
}

interface Options {
  onError: (message: string) => void;
  /** A conversation was created or got a new message: the sidebar moves it to the top. */
  onTouched: (conversation: Conversation) => void;
  /** Looks a conversation up, to move it to the top when a message is sent. */
  findConversation: (id: ConversationId) => Conversation | undefined;
}

/** The branch after a `started` event: up to the user's message's parent, then the two new ones. */
export function startBranch(previous: MessageView[], user: MessageView, reply: Message): MessageView[] {
  let cut = previous.findIndex((view) => view.message.id === user.message.id);
  if (cut < 0) {
    const parent = user.message.parent_id;
    const parentIndex = previous.findIndex((view) => view.message.id === parent);
    cut = parentIndex >= 0 ? parentIndex + 1 : parent === null ? 0 : previous.length;
  }
  const replyView: MessageView = { message: reply, attachments: [], siblings: { ids: [reply.id], index: 0 } };
  return [...previous.slice(0, cut), user, replyView];
}

function replaceMessage(views: MessageView[], message: Message): MessageView[] {
  return views.map((view) => (view.message.id === message.id ? { ...view, message } : view));
}

/** How often streamed text is drawn: each draw (render, layout, paint) takes the web process's
 * time, which on a small machine is the engine's. The wait is nine times what the last draw
 * took, so drawing takes at most a tenth of the time: a fast machine draws ten times a second,
 * software rendering (0.1 to 0.2 s a draw under WebKitGTK on two cores, more for a long code
 * block) about once a second. bench/window.py measured the 2,000-token reply at 0.58x the
 * command line's streaming speed drawing twice a second there. */
const DRAW_COST_FACTOR = 9;
const MIN_DRAW_EVERY_MS = 100;
const MAX_DRAW_EVERY_MS = 1500;

export function drawInterval(lastDrawMs: number): number {
  return Math.min(MAX_DRAW_EVERY_MS, Math.max(MIN_DRAW_EVERY_MS, lastDrawMs * DRAW_COST_FACTOR));
}

/** Calls `callback` on the next frame (or soon, where there are no frames, as in tests). */
function nextFrame(callback: () => void): void {
  if (typeof requestAnimationFrame === 'function') requestAnimationFrame(callback);
  else setTimeout(callback, 16);
}

/** Calls `callback` once the next frame is painted: a task queued in the frame's callbacks runs
 * after its paint (one frame sooner than waiting for the frame after). */
function afterPaint(callback: () => void): void {
  nextFrame(() => setTimeout(callback, 0));
}

export function useChat({ onError, onTouched, findConversation }: Options): Chat {
  const [conversationId, setConversationId] = useState<ConversationId | null>(null);
  const [messages, setMessages] = useState<MessageView[]>([]);
  const [loading, setLoading] = useState(false);
  const [streaming, setStreamingState] = useState<Streaming | null>(null);
  const [plans, setPlans] = useState<ReadonlyMap<MessageId, AnyPlan>>(new Map());

  // Event handlers outlive renders, so they read the current values from refs.
  const currentRef = useRef<ConversationId | null>(null);
  const streamingRef = useRef<Streaming | null>(null);
  const setStreaming = useCallback((value: Streaming | null) => {
    streamingRef.current = value;
    setStreamingState(value);
  }, []);

  const refresh = useCallback((id: ConversationId) => {
    conversationMessages(id).then(
      (views) => {
        if (currentRef.current === id) setMessages(views);
      },
      () => {
        /* The branch shown is still right, only the sibling counts may lag. */
      },
    );
  }, []);

  const open = useCallback(
    (id: ConversationId | null) => {
      currentRef.current = id;
      setConversationId(id);
      setMessages([]);
      if (id === null) {
        setLoading(false);
        return;
      }
      setLoading(true);
      conversationMessages(id)
        .then((views) => {
          if (currentRef.current === id) setMessages(views);
        })
        .catch((e: unknown) => onError(`Could not open the conversation: ${errorMessage(e)}`))
        .finally(() => {
          if (currentRef.current === id) setLoading(false);
        });
    },
    [onError],
  );

  /** One handler per reply; tokens are batched and drawn on a frame, at most once every drawInterval. */
  const makeHandler = useCallback(
    (conversation: ConversationId, started: { value: boolean }, addsSiblings: boolean): ReplyHandler => {
      let replyId: MessageId | null = null;
      let pending = '';
      let scheduled = false;
      let drawnAt = 0;
      // None until the first draw has been timed: the text that came while the first token was
      // drawn goes on screen at the next frame, so a short reply shows as it streams too.
      let drawEvery = 0;
      const visible = () => currentRef.current === conversation;

      const flush = () => {
        scheduled = false;
        drawnAt = Date.now();
        if (!pending || replyId === null) return;
        const text = pending;
        const id = replyId;
        pending = '';
        if (!visible()) return;
        // The frame after next has this draw painted: its cost sets the wait before the next one.
        const start = performance.now();
        nextFrame(() => nextFrame(() => (drawEvery = drawInterval(performance.now() - start))));
        setMessages((views) =>
          views.map((view) =>
            view.message.id === id ? { ...view, message: { ...view.message, content: view.message.content + text } } : view,
          ),
        );
      };

      const finish = () => {
        if (streamingRef.current?.conversation === conversation) setStreaming(null);
      };

      return (event: ReplyEvent) => {
        switch (event.kind) {
          case 'started': {
            started.value = true;
            replyId = event.reply.id;
            setStreaming({ conversation, replyId });
            if (visible()) setMessages((views) => startBranch(views, event.user, event.reply));
            const known = findConversation(conversation);
            if (known) onTouched({ ...known, updated_at: event.reply.created_at });
            break;
          }
          case 'plan':
          case 'remote':
            if (replyId !== null) {
              const id = replyId;
              setPlans((previous) => new Map(previous).set(id, event.plan));
            }
            break;
          case 'token':
            pending += event.text;
            // The first text is drawn at once: it is what a person waits for after Enter. The
            // engine waits (briefly) until it is on screen, so the drawing has the cores.
            if (drawnAt === 0) {
              flush();
              afterPaint(() => void replyShown(conversation).catch(() => undefined));
            } else if (!scheduled) {
              scheduled = true;
              const wait = drawnAt + drawEvery - Date.now();
              if (wait > 0) setTimeout(() => nextFrame(flush), wait);
              else nextFrame(flush);
            }
            break;
          case 'done':
            pending = '';
            if (visible()) {
              setMessages((views) => replaceMessage(views, event.reply));
              // Regenerations and edits add siblings: fetch the counts the switcher shows.
              if (addsSiblings) refresh(conversation);
            }
            finish();
            break;
          case 'error':
            flush();
            if (event.reply) {
              const reply = { ...event.reply, error: event.reply.error ?? event.message };
              if (visible()) setMessages((views) => replaceMessage(views, reply));
            } else {
              onError(event.message);
            }
            finish();
            break;
        }
      };
    },
    [findConversation, onError, onTouched, refresh, setStreaming],
  );

  /** Runs one streamed reply; true when the backend saved the message (`started` came). */
  const stream = useCallback(
    async (conversation: ConversationId, run: (handler: ReplyHandler) => Promise<void>, addsSiblings = false): Promise<boolean> => {
      if (streamingRef.current) {
        onError('A reply is still being written. Stop it first.');
        return false;
      }
      const started = { value: false };
      setStreaming({ conversation, replyId: null });
      try {
        await run(makeHandler(conversation, started, addsSiblings));
      } catch (e) {
        onError(errorMessage(e));
      } finally {
        // (Read through a widened type: the handler has changed it since the check above.)
        const active = streamingRef.current as Streaming | null;
        if (active?.conversation === conversation) setStreaming(null);
      }
      return started.value;
    },
    [makeHandler, onError, setStreaming],
  );

  const send = useCallback(
    async (text: string, attachments: string[]) => {
      let id = currentRef.current;
      if (id === null) {
        try {
          const created = await createConversation();
          id = created.id;
          currentRef.current = id;
          setConversationId(id);
          setMessages([]);
          onTouched(created);
        } catch (e) {
          onError(`Could not start a conversation: ${errorMessage(e)}`);
          return false;
        }
      }
      const conversation = id;
      return stream(conversation, (handler) => sendMessage(conversation, text, attachments, handler));
    },
    [onError, onTouched, stream],
  );

  const regenerateReply = useCallback(
    (reply: MessageId) => {
      const id = currentRef.current;
      if (id === null) return Promise.resolve(false);
      return stream(id, (handler) => regenerate(reply, handler), true);
    },
    [stream],
  );

  const continueStopped = useCallback(
    (reply: MessageId) => {
      const id = currentRef.current;
      if (id === null) return Promise.resolve(false);
      return stream(id, (handler) => continueReply(reply, handler), true);
    },
    [stream],
  );

  const edit = useCallback(
    (message: MessageId, text: string) => {
      const id = currentRef.current;
      if (id === null) return Promise.resolve(false);
      return stream(id, (handler) => editMessage(message, text, handler), true);
    },
    [stream],
  );

  const stop = useCallback(() => {
    const active = streamingRef.current;
    if (!active) return;
    stopReply(active.conversation).catch((e: unknown) => onError(`Could not stop the reply: ${errorMessage(e)}`));
  }, [onError]);

  const selectSibling = useCallback(
    (message: MessageId) => {
      const id = currentRef.current;
      selectBranch(message)
        .then((views) => {
          if (currentRef.current === id) setMessages(views);
        })
        .catch((e: unknown) => onError(`Could not switch branches: ${errorMessage(e)}`));
    },
    [onError],
  );

  return {
    conversationId,
    messages,
    loading,
    streaming,
    plans,
    open,
    send,
    regenerate: regenerateReply,
    continueReply: continueStopped,
    edit,
    stop,
    selectSibling,
  };
}
