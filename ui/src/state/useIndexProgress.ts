import { useEffect, useState } from 'react';
import { onDocumentIndex, type IndexProgress } from '../ipc';

/** The latest progress of the document `hash`'s index while it is being made (a document too
 *  large for the context is cut into passages and embedded); null when none is under way. */
export function useIndexProgress(hash: string): IndexProgress | null {
  const [progress, setProgress] = useState<IndexProgress | null>(null);
  useEffect(() => {
    let live = true;
    const stop = onDocumentIndex((update) => {
      if (!live || update.hash !== hash) return;
      setProgress(update.done ? null : update);
    });
    return () => {
      live = false;
      void stop.then((unlisten) => unlisten()).catch(() => undefined);
    };
  }, [hash]);
  return progress;
}
