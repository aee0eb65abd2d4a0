// The hub downloads, kept current by the backend's `download` events. Lives as long as the
// window (downloads go on while Get models is closed), and tells the model picker to look again
// when one finishes: only then does the model appear there.
import { useCallback, useEffect, useState } from 'react';
import {
  cancelDownload,
  errorMessage,
  listDownloads,
  onDownload,
  pauseDownload,
  resumeDownload,
  startDownload,
  type Download,
} from '../ipc';

export interface Downloads {
  items: Download[];
  start: (repo: string, files?: string[]) => void;
  pause: (id: string) => void;
  resume: (id: string) => void;
  cancel: (id: string) => void;
}

export function useDownloads(onFinished: () => void, onError: (message: string) => void): Downloads {
  const [items, setItems] = useState<Download[]>([]);

  const upsert = useCallback((download: Download) => {
    setItems((list) => {
      if (download.status === 'cancelled') return list.filter((d) => d.id !== download.id);
      const at = list.findIndex((d) => d.id === download.id);
      if (at < 0) return [...list, download];
      const next = list.slice();
      next[at] = download;
      return next;
    });
  }, []);

  useEffect(() => {
    let live = true;
    let unlisten: (() => void) | null = null;
    onDownload((download) => {
      if (!live) return;
      upsert(download);
      if (download.status === 'done') onFinished();
    })
      .then((stop) => (live ? (unlisten = stop) : stop()))
      .catch(() => {
        /* No event bridge outside Tauri. */
      });
    listDownloads().then(
      (list) => live && setItems(list),
      () => {
        /* Shown empty; starting one reports its own error. */
      },
    );
    return () => {
      live = false;
      unlisten?.();
    };
  }, [onFinished, upsert]);

  const fail = useCallback((e: unknown) => onError(errorMessage(e)), [onError]);
  const start = useCallback((repo: string, files: string[] = []) => void startDownload(repo, files).then(upsert, fail), [upsert, fail]);
  const pause = useCallback((id: string) => void pauseDownload(id).catch(fail), [fail]);
  const resume = useCallback((id: string) => void resumeDownload(id).then(upsert, fail), [upsert, fail]);
  // The row goes when the backend's last event (status `cancelled`) comes.
  const cancel = useCallback((id: string) => void cancelDownload(id).catch(fail), [fail]);
  return { items, start, pause, resume, cancel };
}
