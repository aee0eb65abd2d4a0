// The open conversation: its current branch, and the reply streaming into it.
import { useCallback, useRef, useState } from 'react';
import { flushSync } from 'react-dom';
import {
  continueReply,
  conversationMessages,
  editMessage,
  errorMessage,
  regenerate,
  selectBranch,
  sendMessage,
  stopReply,
  type Conversation,
  type ConversationId,
  type Message,
  type MessageId,
  type MessageView,
  type AnyPlan,
  type Attachment,
  type CanvasUpdate,
  type QueueReason,
  type ReplyEvent,
  type ReplyHandler,
  type ToolCall,
} from '../ipc';
import { toolCallsOf, upsertToolCall } from '../lib/toolCalls';

export interface Streaming {
  /** Null for a new chat until the backend has made it (its `started` event). */
  conversation: ConversationId | null;
  /** Null until the backend has saved the user's message and started the reply. */
  replyId: MessageId | null;
}

/** A reply that waits to start: for memory, or for a free row (the engine's queue). */
export interface QueuedReply {
  reply: MessageId;
  reason: QueueReason;
  /** Replies waiting before it. */
  ahead: number;
}

/** A denoising model's canvas, forming in the reply streaming now. */
export interface FormingCanvasOf {
  reply: MessageId;
  canvas: CanvasUpdate;
}

export interface Chat {
  conversationId: ConversationId | null;
  messages: MessageView[];
  loading: boolean;
  streaming: Streaming | null;
  /** What each reply reused, as its plan said (kept for this session only). */
  plans: ReadonlyMap<MessageId, AnyPlan>;
  /** The canvas a denoising model is writing, as its latest step left it (drawn with the text). */
  canvas: FormingCanvasOf | null;
  /** The streaming reply, while it waits to start. */
  queued: QueuedReply | null;
  /** The key each message is drawn under: a sent message and its reply keep the one they were
   *  shown with at Enter, so that saving them changes nothing on screen. */
  keyOf: (id: MessageId) => number;
  open: (id: ConversationId | null) => void;
  /** Resolves true once the message is saved (the composer can let go of its text). */
  send: (text: string, attachments: Attachment[]) => Promise<boolean>;
  regenerate: (reply: MessageId) => Promise<boolean>;
  /** More of a stopped or interrupted reply, in the same message. */
  continueReply: (reply: MessageId) => Promise<boolean>;
  edit: (message: MessageId, text: string) => Promise<boolean>;
  stop: () => void;
  selectSibling: (message: MessageId) => void;
}

interface Options {
  onError: (message: string) => void;
  /** The thinking switch as shown for a chat not made yet: a new chat starts with it. */
  newChatThinking?: boolean;
  /** A conversation was created or got a new message: the sidebar moves it to the top. */
  onTouched: (conversation: Conversation) => void;
  /** Looks a conversation up, to move it to the top when a message is sent. */
  findConversation: (id: ConversationId) => Conversation | undefined;
}

/** The branch after a `started` event: up to the user's message's parent, then the two new ones
 * (in place of the ones shown at Enter). */
export function startBranch(previous: MessageView[], user: MessageView, reply: Message): MessageView[] {
  previous = previous.filter((view) => !isProvisional(view.message.id));
  let cut = previous.findIndex((view) => view.message.id === user.message.id);
  if (cut < 0) {
    const parent = user.message.parent_id;
    const parentIndex = previous.findIndex((view) => view.message.id === parent);
    cut = parentIndex >= 0 ? parentIndex + 1 : parent === null ? 0 : previous.length;
  }
  const replyView: MessageView = { message: reply, attachments: [], siblings: { ids: [reply.id], index: 0 } };
  return [...previous.slice(0, cut), user, replyView];
}

/** Ids of the user's message and its reply as shown at Enter, before the backend has saved
 * them: below zero, where saved ones start at one. */
const isProvisional = (id: MessageId) => id < 0;

/** The message just sent and an empty reply, drawn at Enter: one frame for everything Enter
 * changes, before the engine needs the cores. */
function provisionalViews(previous: MessageView[], ids: [MessageId, MessageId], text: string, attachments: Attachment[]): MessageView[] {
  const last = previous.at(-1)?.message ?? null;
  const at = Date.now();
  const base = {
    conversation_id: last?.conversation_id ?? 0,
    error: null,
    created_at: at,
    stats: null,
    reasoning: null,
    reasoning_ms: null,
    tool_calls: [],
  };
  const user: Message = { ...base, id: ids[0], parent_id: last?.id ?? null, role: 'user', content: text, status: 'complete' };
  const reply: Message = { ...base, id: ids[1], parent_id: ids[0], role: 'assistant', content: '', status: 'streaming' };
  const alone = (message: Message) => ({ ids: [message.id], index: 0 });
  return [...previous, { message: user, attachments, siblings: alone(user) }, { message: reply, attachments: [], siblings: alone(reply) }];
}

/** A streaming reply with more text, more reasoning, and how long the model thought once known. */
function grown(message: Message, text: string, reasoning: string, thoughtMs: number | null): Message {
  return {
    ...message,
    content: message.content + text,
    reasoning: reasoning ? (message.reasoning ?? '') + reasoning : message.reasoning,
    reasoning_ms: thoughtMs ?? message.reasoning_ms,
  };
}

/** The branch with `call` in its reply, in place of the one at its position. */
function withToolCall(views: MessageView[], call: ToolCall): MessageView[] {
  return views.map((view) =>
    view.message.id === call.message_id
      ? { ...view, message: { ...view.message, tool_calls: upsertToolCall(toolCallsOf(view.message), call) } }
      : view,
  );
}

function replaceMessage(views: MessageView[], message: Message): MessageView[] {
  return views.map((view) => (view.message.id === message.id ? { ...view, message } : view));
}

/** How often streamed text is drawn: each draw (render, layout, paint) takes the web process's
 * time, which on a small machine is the engine's. The wait is nine times what the last draw
 * took (timed from the render to the frame after its paint, so the wait between frames counts
 * too), so drawing takes at most a tenth of the time: a fast machine draws ten times a second,
 * software rendering under WebKitGTK on two cores (40-60 ms a draw so timed, more for a long
 * code block) two or three times a second. bench/window.py measured the 2,000-token reply at
 * 0.96-1.01x the command line's streaming speed there. */
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

export function useChat({ onError, onTouched, findConversation, newChatThinking = true }: Options): Chat {
  const [conversationId, setConversationId] = useState<ConversationId | null>(null);
  const [messages, setMessages] = useState<MessageView[]>([]);
  const [loading, setLoading] = useState(false);
  const [streaming, setStreamingState] = useState<Streaming | null>(null);
  const [plans, setPlans] = useState<ReadonlyMap<MessageId, AnyPlan>>(new Map());
  const [canvas, setCanvas] = useState<FormingCanvasOf | null>(null);
  const [queued, setQueued] = useState<QueuedReply | null>(null);
  // Saved id -> the provisional id it was drawn under at Enter (see `keyOf`).
  const [keys, setKeys] = useState<ReadonlyMap<MessageId, MessageId>>(new Map());
  const nextProvisional = useRef(-1);
  // Stop pressed in a new chat before the backend had named it: sent once it has.
  const stopSoon = useRef(false);
  // Counts the replies started, so that one ending late never clears a newer one's state.
  const streams = useRef(0);

  // Event handlers outlive renders, so they read the current values from refs.
  const currentRef = useRef<ConversationId | null>(null);
  const newChatThinkingRef = useRef(newChatThinking);
  newChatThinkingRef.current = newChatThinking;
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
    (
      chat: ConversationId | null,
      started: { value: boolean },
      addsSiblings: boolean,
      provisional: [MessageId, MessageId] | null,
    ): ReplyHandler => {
      let conversation = chat;
      let replyId: MessageId | null = null;
      // The plan arrives before the prompt is computed: it is drawn with the finished reply (it
      // sits under "Details" by the stats), so that it costs no frame while the engine computes.
      let plan: AnyPlan | null = null;
      let pending = '';
      // A thinking model's reasoning, and how long it thought once it stopped: drawn with the text.
      let pendingReasoning = '';
      let thoughtMs: number | null = null;
      // A denoising model's canvas as its latest step left it; null once it is finished (its
      // text came as tokens), undefined while nothing new came.
      let pendingCanvas: CanvasUpdate | null | undefined;
      let scheduled = false;
      let drawnAt = 0;
      let drawEvery = 0;
      // A draw is being timed: text that comes meanwhile waits for its cost, so that a short
      // reply is drawn twice (its first token, then the whole of it) while the engine decodes.
      let timing = false;
      const visible = () => currentRef.current === conversation;

      const showPlan = () => {
        if (plan === null || replyId === null) return;
        const [id, shown] = [replyId, plan];
        plan = null;
        setPlans((previous) => new Map(previous).set(id, shown));
      };

      // The next draw, at most once every drawEvery (see drawInterval).
      const schedule = () => {
        if (scheduled || timing) return;
        scheduled = true;
        const wait = drawnAt + drawEvery - Date.now();
        if (wait > 0) setTimeout(() => nextFrame(() => flush()), wait);
        else nextFrame(() => flush());
      };

      // `now`: commit this draw at once rather than with React's next batch, so that the first
      // text is on the page even when the rest of a short reply comes right behind it.
      const flush = (now = false) => {
        scheduled = false;
        drawnAt = Date.now();
        if ((!pending && !pendingReasoning && thoughtMs === null && pendingCanvas === undefined) || replyId === null) return;
        const [text, reasoning, ms, forming] = [pending, pendingReasoning, thoughtMs, pendingCanvas];
        const id = replyId;
        pending = '';
        pendingReasoning = '';
        thoughtMs = null;
        pendingCanvas = undefined;
        if (!visible()) return;
        // The frame after next has this draw painted: its cost sets the wait before the next one.
        const start = performance.now();
        timing = true;
        nextFrame(() =>
          nextFrame(() => {
            drawEvery = drawInterval(performance.now() - start);
            timing = false;
            if (pending || pendingReasoning || thoughtMs !== null || pendingCanvas !== undefined) schedule();
          }),
        );
        const draw = () => {
          if (text || reasoning || ms !== null) {
            setMessages((views) =>
              views.map((view) => (view.message.id === id ? { ...view, message: grown(view.message, text, reasoning, ms) } : view)),
            );
          }
          // A finished canvas leaves the view as its text joins the reply, in the same draw.
          if (forming !== undefined) setCanvas(forming && { reply: id, canvas: forming });
        };
        if (now) flushSync(draw);
        else draw();
      };

      const finish = () => {
        if (streamingRef.current?.conversation === conversation) setStreaming(null);
        pendingCanvas = undefined;
        setCanvas((shown) => (shown !== null && shown.reply === replyId ? null : shown));
        setQueued((shown) => (shown !== null && shown.reply === replyId ? null : shown));
      };

      return (event: ReplyEvent) => {
        switch (event.kind) {
          case 'started': {
            started.value = true;
            replyId = event.reply.id;
            if (conversation === null) {
              // A new chat, made by this send: still the one shown unless another was opened.
              conversation = event.reply.conversation_id;
              if (currentRef.current === null) {
                currentRef.current = conversation;
                setConversationId(conversation);
              }
            }
            setStreaming({ conversation, replyId });
            if (stopSoon.current) {
              stopSoon.current = false;
              stopReply(conversation).catch(() => undefined);
            }
            if (provisional) {
              const [user, reply] = [event.user.message.id, event.reply.id];
              setKeys((previous) => new Map(previous).set(user, provisional[0]).set(reply, provisional[1]));
            }
            if (visible()) setMessages((views) => startBranch(views, event.user, event.reply));
            const known = findConversation(conversation);
            if (known) onTouched({ ...known, updated_at: event.reply.created_at });
            break;
          }
          case 'sources': {
            const { reply, sources } = event;
            if (visible()) setMessages((views) => views.map((view) => (view.message.id === reply ? { ...view, sources } : view)));
            break;
          }
          case 'queued':
            if (replyId !== null) setQueued({ reply: replyId, reason: event.reason, ahead: event.ahead });
            break;
          case 'plan':
          case 'remote':
            plan = event.plan;
            setQueued((shown) => (shown !== null && shown.reply === replyId ? null : shown));
            break;
          case 'reasoning':
          case 'token':
            if (event.kind === 'reasoning') pendingReasoning += event.text;
            else pending += event.text;
            // The first text is drawn at once: it is what a person waits for after Enter.
            if (drawnAt === 0) {
              flush(true);
            } else {
              schedule();
            }
            break;
          case 'thought':
            thoughtMs = event.reasoning_ms;
            schedule();
            break;
          case 'canvas':
            pendingCanvas = event.canvas.finished ? null : event.canvas;
            // The first canvas is drawn at once, as the first text is.
            if (drawnAt === 0) flush(true);
            else schedule();
            break;
          case 'tool': {
            // The round's text first, so that the call's offset falls within what is drawn.
            flush();
            const call = event.call;
            if (visible()) setMessages((views) => withToolCall(views, call));
            break;
          }
          case 'done':
            pending = '';
            pendingReasoning = '';
            showPlan();
            if (visible()) {
              setMessages((views) => replaceMessage(views, event.reply));
              // Regenerations and edits add siblings: fetch the counts the switcher shows.
              if (addsSiblings && conversation !== null) refresh(conversation);
            }
            finish();
            break;
          case 'error':
            flush();
            showPlan();
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

  /** Runs one streamed reply; true when the backend saved the message (`started` came). A sent
   *  message (`sent`) is drawn at once with an empty reply, in the chat shown. */
  const stream = useCallback(
    async (
      conversation: ConversationId | null,
      run: (handler: ReplyHandler) => Promise<void>,
      addsSiblings = false,
      sent: { text: string; attachments: Attachment[] } | null = null,
    ): Promise<boolean> => {
      if (streamingRef.current) {
        onError('A reply is still being written. Stop it first.');
        return false;
      }
      const started = { value: false };
      const seq = ++streams.current;
      let provisional: [MessageId, MessageId] | null = null;
      if (sent) {
        provisional = [nextProvisional.current, nextProvisional.current - 1];
        nextProvisional.current -= 2;
        const ids = provisional;
        setMessages((views) => provisionalViews(views, ids, sent.text, sent.attachments));
      }
      setStreaming({ conversation, replyId: null });
      try {
        await run(makeHandler(conversation, started, addsSiblings, provisional));
      } catch (e) {
        onError(errorMessage(e));
      } finally {
        // Unless it has ended already and another reply has started since.
        if (streams.current === seq) {
          if (streamingRef.current) setStreaming(null);
          stopSoon.current = false;
        }
        // Nothing was saved: the message goes back to the box, and off the screen.
        if (!started.value && provisional) setMessages((views) => views.filter((view) => !isProvisional(view.message.id)));
      }
      return started.value;
    },
    [makeHandler, onError, setStreaming],
  );

  const send = useCallback(
    (text: string, attachments: Attachment[]) => {
      // A new chat (none open) is made by the backend with the message: one call, not two.
      const conversation = currentRef.current;
      const hashes = attachments.map((a) => a.hash);
      const thinking = conversation === null ? newChatThinkingRef.current : null;
      return stream(conversation, (handler) => sendMessage(conversation, text, hashes, thinking, handler), false, { text, attachments });
    },
    [stream],
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
    if (active.conversation === null) {
      stopSoon.current = true;
      return;
    }
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

  const keyOf = useCallback((id: MessageId) => keys.get(id) ?? id, [keys]);

  return {
    conversationId,
    messages,
    loading,
    streaming,
    plans,
    canvas,
    queued,
    keyOf,
    open,
    send,
    regenerate: regenerateReply,
    continueReply: continueStopped,
    edit,
    stop,
    selectSibling,
  };
}
