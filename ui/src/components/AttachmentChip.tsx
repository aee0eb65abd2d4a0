import type { Attachment } from '../ipc';
import { mediaKindOfMime } from '../lib/capabilities';
import { clockDuration, humanSize } from '../lib/format';
import { AttachmentPreview } from './AttachmentPreview';
import { Icon } from './Icon';

/** A pending attachment in the composer, with its preview and a remove button. */
export function AttachmentChip({ attachment, onRemove }: { attachment: Attachment; onRemove: () => void }) {
  const name = attachment.original_name ?? attachment.mime;
  // A clip's length beside its size (a video shows its own on the frame).
  const length =
    mediaKindOfMime(attachment.mime) === 'audio' && attachment.duration_ms != null ? clockDuration(attachment.duration_ms) : null;
  return (
    <div
      className="attachment-chip"
      data-testid="attachment-chip"
      data-hash={attachment.hash}
      data-duration-ms={attachment.duration_ms ?? undefined}
    >
      <AttachmentPreview attachment={attachment} />
      <div className="chip-label">
        <span className="attachment-name">{name}</span>
        <span className="muted">
          {humanSize(attachment.size)}
          {length && ` · ${length}`}
        </span>
      </div>
      <button type="button" className="chip-remove" data-testid="attachment-remove" aria-label={`Remove ${name}`} onClick={onRemove}>
        <Icon name="close" size={14} />
      </button>
    </div>
  );
}
