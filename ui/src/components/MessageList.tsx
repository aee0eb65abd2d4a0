import { useEffect, useLayoutEffect, useRef, useState, type ReactNode } from 'react';
import type { AnyPlan, ConversationId, MessageId, MessageView, ReplySource } from '../ipc';
import type { FormingCanvasOf, QueuedReply } from '../state/useChat';
import { MessageBubble } from './MessageBubble';
import { SourcePanel } from './Sources';

interface Props {
  conversationId: ConversationId | null;
  messages: MessageView[];
  plans: ReadonlyMap<MessageId, AnyPlan>;
  /** A denoising model's canvas forming in the streaming reply. */
  canvas?: FormingCanvasOf | null;
  /** The streaming reply, while it waits to start. */
  queued?: QueuedReply | null;
  /** The key a message is drawn under (see `Chat.keyOf`). */
  keyOf?: (id: MessageId) => number;
  busy: boolean;
  /** Shown when there are no messages. */
  empty: ReactNode;
  /** A search hit to bring into view once it is on screen. */
  focusMessage: MessageId | null;
  onRegenerate: (reply: MessageId) => void;
  /** More of a stopped or interrupted reply; offered on the last message only. */
  onContinue: (reply: MessageId) => void;
  onEdit: (message: MessageId, text: string) => void;
  onSelectSibling: (message: MessageId) => void;
}

/** How close to the bottom still counts as "at the bottom" (px). */
const stickSlack = 48;

/** The branch, following the bottom as a reply streams unless the user has scrolled up. */
export function MessageList({
  conversationId,
  messages,
  plans,
  canvas = null,
  queued = null,
  keyOf = (id) => id,
  busy,
  empty,
  focusMessage,
  onRegenerate,
  onContinue,
  onEdit,
  onSelectSibling,
}: Props) {
  const scroller = useRef<HTMLDivElement>(null);
  const stickToBottom = useRef(true);
  const focused = useRef<MessageId | null>(null);
  // The citation open beside the chat, if any.
  const [source, setSource] = useState<ReplySource | null>(null);

  // A newly opened conversation starts at its end, with no citation open.
  useEffect(() => {
    stickToBottom.current = true;
    setSource(null);
  }, [conversationId]);

  useLayoutEffect(() => {
    const element = scroller.current;
    if (element && stickToBottom.current) element.scrollTop = element.scrollHeight;
  }, [messages]);

  useEffect(() => {
    if (focusMessage === null || focused.current === focusMessage) return;
    const element = scroller.current?.querySelector(`[data-id="${focusMessage}"]`);
    if (element) {
      focused.current = focusMessage;
      stickToBottom.current = false;
      element.scrollIntoView?.({ block: 'center' });
      element.classList.add('flash');
      const timer = setTimeout(() => element.classList.remove('flash'), 1600);
      return () => clearTimeout(timer);
    }
  }, [focusMessage, messages]);

  const onScroll = () => {
    const element = scroller.current;
    if (!element) return;
    stickToBottom.current = element.scrollHeight - element.scrollTop - element.clientHeight < stickSlack;
  };

  const visible = messages.filter((view) => view.message.role !== 'system');
  return (
    <div className="message-list" data-testid="message-list" ref={scroller} onScroll={onScroll}>
      {visible.length === 0 ? (
        <div className="empty-state">{empty}</div>
      ) : (
        <div className="message-column">
          {visible.map((view, index) => (
            <MessageBubble
              key={keyOf(view.message.id)}
              view={view}
              plan={plans.get(view.message.id)}
              canvas={canvas?.reply === view.message.id ? canvas.canvas : undefined}
              queued={queued?.reply === view.message.id ? queued : undefined}
              busy={busy}
              onRegenerate={onRegenerate}
              onContinue={index === visible.length - 1 ? onContinue : undefined}
              onEdit={onEdit}
              onSelectSibling={onSelectSibling}
              onOpenSource={setSource}
            />
          ))}
        </div>
      )}
      {source && <SourcePanel source={source} onClose={() => setSource(null)} />}
    </div>
  );
}
