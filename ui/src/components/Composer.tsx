import {
  forwardRef,
  useCallback,
  useEffect,
  useImperativeHandle,
  useLayoutEffect,
  useRef,
  useState,
  type ClipboardEvent,
  type KeyboardEvent,
} from 'react';
import type { Attachment, ConversationId } from '../ipc';
import { DOCUMENT_PICKER_TYPES, isDocumentMime } from '../lib/capabilities';
import { contextVerdict, surelyFits } from '../lib/context';
import { clockDuration } from '../lib/format';
import { withShortcut } from '../lib/shortcuts';
import { useContextMeter } from '../state/useContextMeter';
import type { PendingAttachments } from '../state/usePendingAttachments';
import { useRecorder } from '../state/useRecorder';
import { AttachmentChip } from './AttachmentChip';
import { ContextMeter, ContextWarning } from './ContextMeter';
import { Icon } from './Icon';

export interface ComposerHandle {
  focus: () => void;
  /** Replaces the draft with `text` (a suggested prompt) and focuses the box. */
  fill: (text: string) => void;
}

interface Props {
  attachments: PendingAttachments;
  /** Null: sending is possible. Otherwise why not, shown on the disabled button. */
  blockedReason: string | null;
  /** A reply in this conversation is streaming: the Send button becomes Stop. */
  streaming: boolean;
  /** Resolves true when the message was saved; false puts the text back. */
  onSend: (text: string, attachments: Attachment[]) => Promise<boolean>;
  onStop: () => void;
  /** The open chat (null: a new one), for the context meter. */
  conversationId: ConversationId | null;
  /** Everything else the context count depends on (the last message, the model): a change counts again. */
  contextKey: string;
  /** Opens a new chat, keeping the draft (offered when the draft does not fit this one). */
  onNewChat: () => void;
  /** Null: the model reads audio and the microphone button records. Otherwise why not. */
  recordingProblem: string | null;
}

/** Ctrl/⌘+Shift+M starts and stops a recording. */
function isRecordShortcut(event: globalThis.KeyboardEvent): boolean {
  return (event.metaKey || event.ctrlKey) && event.shiftKey && event.key.toLowerCase() === 'm';
}

/** The message box: Enter sends, Shift+Enter adds a line; files come from paste and the picker. */
export const Composer = forwardRef<ComposerHandle, Props>(function Composer(
  { attachments, blockedReason, streaming, onSend, onStop, conversationId, contextKey, onNewChat, recordingProblem },
  ref,
) {
  const [text, setText] = useState('');
  // A recording that failed or was cut short, said here rather than in a banner.
  const [recordingNote, setRecordingNote] = useState<{ text: string; error: boolean } | null>(null);
  const { addFiles } = attachments;
  const recorder = useRecorder({
    onRecorded: (file) => void addFiles([file]),
    onError: (message) => setRecordingNote({ text: message, error: true }),
    onNotice: (message) => setRecordingNote({ text: message, error: false }),
  });
  const { phase: recordingPhase, cancel: cancelRecording, toggle: toggleRecorder } = recorder;
  const recording = recordingPhase !== 'idle';
  const canRecord = recordingProblem === null;
  // The button and the shortcut: stop, cancel or start (a new recording clears the last note).
  const toggleRecording = useCallback(() => {
    if (!recording && !canRecord) return;
    if (!recording) setRecordingNote(null);
    toggleRecorder();
  }, [canRecord, recording, toggleRecorder]);

  // The shortcut works from anywhere in the window; Esc cancels a recording before it reaches
  // the window's own Esc (which stops a reply), hence the capture phase.
  useEffect(() => {
    const onKey = (event: globalThis.KeyboardEvent) => {
      if (isRecordShortcut(event)) {
        event.preventDefault();
        toggleRecording();
      } else if (event.key === 'Escape' && recording) {
        event.preventDefault();
        cancelRecording();
      }
    };
    window.addEventListener('keydown', onKey, true);
    return () => window.removeEventListener('keydown', onKey, true);
  }, [cancelRecording, recording, toggleRecording]);

  // A model change that takes audio away ends a recording without keeping it.
  useEffect(() => {
    if (!canRecord) cancelRecording();
  }, [canRecord, cancelRecording]);
  const meter = useContextMeter(
    conversationId,
    contextKey,
    text,
    streaming,
    attachments.items.map((a) => a.hash),
  );
  // The warning speaks of the text in the box, never of an older count.
  const counted = meter.measured?.draft === text ? meter.measured.use : null;
  const input = useRef<HTMLTextAreaElement>(null);
  const picker = useRef<HTMLInputElement>(null);

  useImperativeHandle(
    ref,
    () => ({
      focus: () => input.current?.focus(),
      fill: (draft: string) => {
        setText(draft);
        input.current?.focus();
      },
    }),
    [],
  );

  // Grow with the text up to a limit (the CSS max-height), then scroll.
  useLayoutEffect(() => {
    const element = input.current;
    if (!element) return;
    element.style.height = 'auto';
    element.style.height = `${element.scrollHeight}px`;
  }, [text]);

  const tooLong = counted !== null && contextVerdict(counted) === 'too-long';
  const canSend =
    blockedReason === null && !tooLong && !streaming && !attachments.busy && (text.trim() !== '' || attachments.items.length > 0);

  /** `anyway`: sent even where the engine must leave the oldest messages out. */
  const send = async (anyway = false) => {
    if (!canSend) return;
    // Checked before sending: a draft that does not fit stays in the box, and the warning says
    // what can be done. When typing has outrun the meter, a fresh count is waited for only
    // where the earlier one leaves doubt.
    const earlier = meter.measured?.use;
    const use = counted ?? (earlier && surelyFits(earlier, text) ? null : await meter.measureNow(text));
    const verdict = use ? contextVerdict(use) : 'fits';
    if (verdict === 'too-long' || (verdict === 'drops-turns' && !anyway)) return;
    const sentText = text;
    const sentAttachments = attachments.items;
    // Clear at once so that the box is ready for the next message; a failure puts it back.
    setText('');
    attachments.clear();
    const saved = await onSend(sentText, sentAttachments);
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

  const micTitle = recording
    ? withShortcut('Stop recording', 'record')
    : (recordingProblem ?? withShortcut('Record from the microphone', 'record'));

  return (
    <div className="composer">
      {recording && (
        <div className="composer-recording" data-testid="recording" data-phase={recordingPhase}>
          <span className="recording-dot" aria-hidden="true" />
          <div
            className="level-meter"
            role="meter"
            aria-label="Microphone level"
            aria-valuemin={0}
            aria-valuemax={1}
            aria-valuenow={recorder.level}
          >
            <div className="level-meter-fill" style={{ width: `${Math.round(recorder.level * 100)}%` }} />
          </div>
          <span className="recording-time" data-testid="recording-time">
            {recordingPhase === 'starting' ? 'Opening the microphone…' : clockDuration(recorder.elapsedMs)}
          </span>
          <button
            type="button"
            className="small"
            data-testid="recording-cancel"
            title={withShortcut('Cancel', 'escape')}
            onClick={cancelRecording}
          >
            Cancel
          </button>
        </div>
      )}
      {recordingNote && (
        <div
          className={recordingNote.error ? 'composer-recording-note error' : 'composer-recording-note muted'}
          data-testid="recording-note"
          role={recordingNote.error ? 'alert' : 'status'}
        >
          {recordingNote.text}
        </div>
      )}
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
          title="Attach images, audio, video or documents"
          aria-label="Attach images, audio, video or documents"
          onClick={() => picker.current?.click()}
        >
          <Icon name="paperclip" />
        </button>
        <button
          type="button"
          className={recording ? 'icon-button recording' : 'icon-button'}
          data-testid="mic-button"
          title={micTitle}
          aria-label={recording ? 'Stop recording' : 'Record from the microphone'}
          aria-pressed={recording}
          disabled={!canRecord && !recording}
          onClick={toggleRecording}
        >
          <Icon name={recording ? 'stop' : 'mic'} />
        </button>
        <input
          ref={picker}
          type="file"
          accept={`image/*,audio/*,video/*,.mov,.m4v,${DOCUMENT_PICKER_TYPES}`}
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
          id="message-box"
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
          <button type="button" className="primary stop" data-testid="stop-button" onClick={onStop} title={withShortcut('Stop', 'escape')}>
            Stop
          </button>
        ) : (
          <button
            type="button"
            className="primary"
            data-testid="send-button"
            disabled={!canSend}
            title={blockedReason ?? (tooLong ? 'Too long for the model: shorten it' : withShortcut('Send', 'send'))}
            onClick={() => void send()}
          >
            {blockedReason === 'Loading model…' ? 'Loading model…' : 'Send'}
          </button>
        )}
      </div>
      {counted && !streaming && (
        <ContextWarning
          use={counted}
          onNewChat={onNewChat}
          onSendAnyway={() => void send(true)}
          documents={attachments.items.filter((a) => isDocumentMime(a.mime)).map((a) => a.original_name ?? a.mime)}
        />
      )}
      {(blockedReason || meter.measured) && (
        <div className="composer-footer">
          <div className="composer-hint muted">{blockedReason}</div>
          {meter.measured && <ContextMeter use={meter.measured.use} />}
        </div>
      )}
    </div>
  );
});
