import type { Attachment } from '../ipc';
import { isDocumentMime, mediaKindOfMime } from '../lib/capabilities';
import { clockDuration } from '../lib/format';
import { useAttachmentUrl, useThumbnailUrl } from '../state/useAttachmentUrl';
import { useIndexProgress } from '../state/useIndexProgress';
import { Icon } from './Icon';

/** An image thumbnail, an audio player, a video's first frame with its length, a document's icon and name; other files by name. */
export function AttachmentPreview({ attachment }: { attachment: Attachment }) {
  const name = attachment.original_name ?? attachment.mime;
  switch (mediaKindOfMime(attachment.mime)) {
    case 'image':
      return <ImagePreview attachment={attachment} name={name} />;
    case 'audio':
      return <AudioPreview attachment={attachment} name={name} />;
    case 'video':
      return <VideoPreview attachment={attachment} name={name} />;
    case 'other':
      return isDocumentMime(attachment.mime) ? (
        <DocumentPreview attachment={attachment} name={name} />
      ) : (
        <span className="attachment-name">{name}</span>
      );
  }
}

type PreviewProps = { attachment: Attachment; name: string };

/** A document's icon and name, with a progress bar while its index is being made. */
function DocumentPreview({ attachment, name }: PreviewProps) {
  const progress = useIndexProgress(attachment.hash);
  return (
    <div className="document-attachment" data-testid="document-attachment" title={name}>
      <Icon name="document" size={22} />
      <span className="attachment-name">{name}</span>
      {progress && (
        <progress
          className="index-progress"
          data-testid="index-progress"
          aria-label={`Indexing ${name}`}
          title={`Indexing for search: ${progress.embedded} of ${progress.passages} passages`}
          max={Math.max(progress.passages, 1)}
          value={progress.embedded}
        />
      )}
    </div>
  );
}

function ImagePreview({ attachment, name }: PreviewProps) {
  const url = useAttachmentUrl(attachment.hash, attachment.mime);
  return url ? <img className="thumbnail" src={url} alt={name} title={name} /> : <div className="thumbnail placeholder" title={name} />;
}

function AudioPreview({ attachment, name }: PreviewProps) {
  const url = useAttachmentUrl(attachment.hash, attachment.mime);
  return (
    <div className="audio-attachment" title={name}>
      <span className="attachment-name">{name}</span>
      {url && <audio controls src={url} preload="metadata" />}
    </div>
  );
}

/** The first frame (decoded by the engine: the web view may not play the codec) and the length. */
function VideoPreview({ attachment, name }: PreviewProps) {
  const url = useThumbnailUrl(attachment.hash);
  const length = attachment.duration_ms != null ? clockDuration(attachment.duration_ms) : null;
  const label = length ? `Video ${name}, ${length}` : `Video ${name}`;
  return (
    <div className="video-attachment" data-testid="video-attachment" title={name}>
      {url ? <img className="thumbnail" src={url} alt={label} /> : <div className="thumbnail placeholder" role="img" aria-label={label} />}
      <span className="video-length" aria-hidden="true">
        <Icon name="video" size={12} />
        {length}
      </span>
    </div>
  );
}
