// Blob URLs for attachments (the CSP allows images and media from blob: only). One URL per
// hash for the whole session, so that thumbnails don't flicker or refetch as lists re-render.
import { useEffect, useState } from 'react';
import { attachmentBytes } from '../ipc';

const urls = new Map<string, Promise<string>>();

function urlFor(hash: string, mime: string): Promise<string> {
  let url = urls.get(hash);
  if (!url) {
    url = attachmentBytes(hash).then((bytes) => URL.createObjectURL(new Blob([bytes as BlobPart], { type: mime })));
    // A failed fetch is tried again next time.
    url.catch(() => urls.delete(hash));
    urls.set(hash, url);
  }
  return url;
}

/** The attachment's blob URL once its bytes are here; null before, or if they can't be read. */
export function useAttachmentUrl(hash: string, mime: string): string | null {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    urlFor(hash, mime).then(
      (value) => live && setUrl(value),
      () => live && setUrl(null),
    );
    return () => {
      live = false;
    };
  }, [hash, mime]);
  return url;
}
