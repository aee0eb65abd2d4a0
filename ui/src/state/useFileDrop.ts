// Native file drops: Tauri hands the webview the dropped files' paths (the browser's own drop
// event carries no paths). Outside Tauri there is no webview to listen to, and nothing happens.
import { useEffect, useRef, useState } from 'react';
import { getCurrentWebview } from '@tauri-apps/api/webview';

/** Calls `onDrop` with dropped paths; returns whether files are being dragged over the window. */
export function useFileDrop(onDrop: (paths: string[]) => void): boolean {
  const [dragging, setDragging] = useState(false);
  const onDropRef = useRef(onDrop);
  useEffect(() => {
    onDropRef.current = onDrop;
  });

  useEffect(() => {
    let live = true;
    let unlisten: (() => void) | null = null;
    try {
      getCurrentWebview()
        .onDragDropEvent((event) => {
          const payload = event.payload;
          if (payload.type === 'enter') setDragging(true);
          else if (payload.type === 'leave') setDragging(false);
          else if (payload.type === 'drop') {
            setDragging(false);
            if (payload.paths.length > 0) onDropRef.current(payload.paths);
          }
        })
        .then((stop) => (live ? (unlisten = stop) : stop()))
        .catch(() => {
          /* Not in Tauri. */
        });
    } catch {
      /* Not in Tauri: getCurrentWebview throws without its internals. */
    }
    return () => {
      live = false;
      unlisten?.();
    };
  }, []);

  // Outside Tauri's handler (a plain browser during development), a file dropped on the page
  // would replace the app with the file: refuse the browser's own drop.
  useEffect(() => {
    const refuse = (event: DragEvent) => event.preventDefault();
    window.addEventListener('dragover', refuse);
    window.addEventListener('drop', refuse);
    return () => {
      window.removeEventListener('dragover', refuse);
      window.removeEventListener('drop', refuse);
    };
  }, []);

  return dragging;
}
