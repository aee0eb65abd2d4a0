import type { Attachment } from '../ipc';
import { useAttachmentUrl } from '../state/useAttachmentUrl';

/** An image thumbnail or an audio player; other files by name. */
export function AttachmentPreview({ attachment }: { attachment: Attachment }) {
  const url = useAttachmentUrl(attachment.hash, attachment.mime);
  const name = attachment.original_name ?? attachment.mime;
  if (attachment.mime.startsWith('image/')) {
    return url ? <img className="thumbnail" src={url} alt={name} title={name} /> : <div className="thumbnail placeholder" title={name} />;
  }
  if (attachment.mime.startsWith('audio/')) {
    return (
      <div className="audio-attachment" title={name}>
        <span className="attachment-name">{name}</span>
        {url && <audio controls src={url} preload="metadata" />}
      </div>
    );
  }
  return <span className="attachment-name">{name}</span>;
}
