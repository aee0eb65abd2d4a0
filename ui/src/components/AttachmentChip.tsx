import { useEffect, useState } from 'react';
import { documentInfo, type Attachment, type DocumentInfo } from '../ipc';
import { isDocumentMime, mediaKindOfMime } from '../lib/capabilities';
import { clockDuration, humanSize } from '../lib/format';
import { AttachmentPreview } from './AttachmentPreview';
import { Icon } from './Icon';

/** A pending attachment in the composer, with its preview and a remove button. */
export function AttachmentChip({ attachment, onRemove }: { attachment: Attachment; onRemove: () => void }) {
  const name = attachment.original_name ?? attachment.mime;
  // A clip's length beside its size (a video shows its own on the frame).
  const length =
    mediaKindOfMime(attachment.mime) === 'audio' && attachment.duration_ms != null ? clockDuration(attachment.duration_ms) : null;
  const docInfo = useDocumentInfo(attachment);
  return (
    <div
      className="attachment-chip"
      data-testid="attachment-chip"
      data-hash={attachment.hash}
      data-duration-ms={attachment.duration_ms ?? undefined}
      data-pages={docInfo?.pages ?? undefined}
      title={docInfo?.notes.join('\n') || undefined}
    >
      <AttachmentPreview attachment={attachment} />
      <div className="chip-label">
        <span className="attachment-name">{name}</span>
        <span className="muted">
          {docInfo && `${documentSummary(docInfo)} · `}
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

/** "PDF · 12 pages", "Markdown". */
export function documentSummary(info: DocumentInfo): string {
  if (info.pages == null) return info.format;
  return `${info.format} · ${info.pages} ${info.pages === 1 ? 'page' : 'pages'}`;
}

/** A document attachment's format and pages, read by the backend; null for media. */
function useDocumentInfo(attachment: Attachment): DocumentInfo | null {
  const [info, setInfo] = useState<DocumentInfo | null>(null);
  const isDocument = isDocumentMime(attachment.mime);
  useEffect(() => {
    if (!isDocument) return;
    let live = true;
    documentInfo(attachment.hash).then(
      (value) => live && setInfo(value),
      () => live && setInfo(null),
    );
    return () => {
      live = false;
    };
  }, [attachment.hash, isDocument]);
  return info;
}
