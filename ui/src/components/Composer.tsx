import { forwardRef, useImperativeHandle, useLayoutEffect, useRef, useState, type ClipboardEvent, type KeyboardEvent } from 'react';
import type { PendingAttachments } from '../state/usePendingAttachments';
import { AttachmentChip } from './AttachmentChip';
import { Icon } from './Icon';

export interface ComposerHandle {
  focus: () => void;
}

interface Props {
  attachments: PendingAttachments;
  /** Null: sending is possible. Otherwise why not, shown on the disabled button. */
  blockedReason: string | null;
  /** A reply in this conversation is streaming: the Send button becomes Stop. */
  streaming: boolean;
  /** Resolves true when the message was saved; false puts the text back. */
  onSend: (text: string, attachments: string[]) => Promise<boolean>;
  onStop: () => void;
}

/** The message box: Enter sends, Shift+Enter adds a line; files come from paste and the picker. */
export const Composer = forwardRef<ComposerHandle, Props>(function Composer(
  { attachments, blockedReason, streaming, onSend, onStop },
  ref,
) {
  const [text, setText] = useState('');
  const input = useRef<HTMLTextAreaElement>(null);
  const picker = useRef<HTMLInputElement>(null);

  useImperativeHandle(ref, () => ({ focus: () => input.current?.focus() }), []);

  // Grow with the text up to a limit (the CSS max-height), then scroll.
  useLayoutEffect(() => {
    const element = input.current;
    if (!element) return;
    element.style.height = 'auto';
    element.style.height = `${element.scrollHeight}px`;
  }, [text]);

  const canSend = blockedReason === null && !streaming && !attachments.busy && (text.trim() !== '' || attachments.items.length > 0);

  const send = async () => {
    if (!canSend) return;
    const sentText = text;
    const sentAttachments = attachments.items;
    // Clear at once so that the box is ready for the next message; a failure puts it back.
    setText('');
    attachments.clear();
    const saved = await onSend(sentText, sentAttachments.map((a) => a.hash));
    if (!saved) {
      setText((current) => (current === '' ? sentText : current));
      attachments.restore(sentAttachments);
    }
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      void send();
    }
  };

  const onPaste = (event: ClipboardEvent<HTMLTextAreaElement>) => {
    // Pasted files become attachments; pasted text (HTML included) is left to the textarea,
    // which only ever takes it as plain text.
    const files = Array.from(event.clipboardData?.files ?? []);
    if (files.length > 0) {
      event.preventDefault();
      void attachments.addFiles(files);
    }
  };

  return (
    <div className="composer">
      {attachments.items.length > 0 && (
        <div className="composer-attachments">
          {attachments.items.map((attachment) => (
            <AttachmentChip key={attachment.hash} attachment={attachment} onRemove={() => attachments.remove(attachment.hash)} />
          ))}
        </div>
      )}
      <div className="composer-row">
        <button
          type="button"
          className="icon-button"
          data-testid="attach-button"
          title="Attach images or audio"
          aria-label="Attach images or audio"
          onClick={() => picker.current?.click()}
        >
          <Icon name="paperclip" />
        </button>
        <input
          ref={picker}
          type="file"
          accept="image/*,audio/*"
          multiple
          hidden
          data-testid="file-input"
          onChange={(event) => {
            const files = Array.from(event.target.files ?? []);
            event.target.value = '';
            if (files.length > 0) void attachments.addFiles(files);
          }}
        />
        <textarea
          ref={input}
          data-testid="composer-input"
          className="composer-input"
          placeholder="Message Confab…"
          rows={1}
          autoFocus
          value={text}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={onKeyDown}
          onPaste={onPaste}
        />
        {streaming ? (
          <button type="button" className="primary stop" data-testid="stop-button" onClick={onStop} title="Stop (Esc)">
            Stop
          </button>
        ) : (
          <button
            type="button"
            className="primary"
            data-testid="send-button"
            disabled={!canSend}
            title={blockedReason ?? 'Send (Enter)'}
            onClick={() => void send()}
          >
            {blockedReason === 'Loading model…' ? 'Loading model…' : 'Send'}
          </button>
        )}
      </div>
      {blockedReason && <div className="composer-hint muted">{blockedReason}</div>}
    </div>
  );
});
