// Blob URLs for attachments (the CSP allows images and media from blob: only). One URL per
// hash for the whole session, so that thumbnails don't flicker or refetch as lists re-render.
import { useEffect, useState } from 'react';
import { attachmentBytes, attachmentThumbnail } from '../ipc';

const urls = new Map<string, Promise<string>>();

function cached(key: string, fetch: () => Promise<Uint8Array>, mime: string): Promise<string> {
  let url = urls.get(key);
  if (!url) {
    url = fetch().then((bytes) => URL.createObjectURL(new Blob([bytes as BlobPart], { type: mime })));
    // A failed fetch is tried again next time.
    url.catch(() => urls.delete(key));
    urls.set(key, url);
  }
  return url;
}

function useBlobUrl(key: string, fetch: () => Promise<Uint8Array>, mime: string): string | null {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    cached(key, fetch, mime).then(
      (value) => live && setUrl(value),
      () => live && setUrl(null),
    );
    return () => {
      live = false;
    };
    // `fetch` is derived from `key`.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, mime]);
  return url;
}

/** The attachment's blob URL once its bytes are here; null before, or if they can't be read. */
export function useAttachmentUrl(hash: string, mime: string): string | null {
  return useBlobUrl(hash, () => attachmentBytes(hash), mime);
}

/** A video attachment's first frame as a PNG blob URL; null before, or if it can't be decoded. */
export function useThumbnailUrl(hash: string): string | null {
  return useBlobUrl(`thumbnail:${hash}`, () => attachmentThumbnail(hash), 'image/png');
}
