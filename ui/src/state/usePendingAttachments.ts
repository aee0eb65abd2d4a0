// Attachments waiting in the composer: added from drops (paths), the picker and pastes (bytes).
// Media the loaded model can't take is turned away with a notice instead of failing at send.
import { useCallback, useState } from 'react';
import { attachBytes, attachPaths, errorMessage, type Attachment, type ModelSummary } from '../ipc';
import { capabilityProblem, mediaKindOfMime, type MediaKind, type Replier } from '../lib/capabilities';

export interface PendingAttachments {
  items: Attachment[];
  busy: boolean;
  addPaths: (paths: string[]) => Promise<void>;
  addFiles: (files: File[]) => Promise<void>;
  remove: (hash: string) => void;
  clear: () => void;
  /** Puts back what a failed send took. */
  restore: (items: Attachment[]) => void;
}

interface Options {
  /** The model replies go to (local or remote). */
  loaded: Replier | null;
  models: ModelSummary[];
  onError: (message: string) => void;
  onNotice: (message: string) => void;
}

export function usePendingAttachments({ loaded, models, onError, onNotice }: Options): PendingAttachments {
  const [items, setItems] = useState<Attachment[]>([]);
  const [busy, setBusy] = useState(false);

  const add = useCallback((added: Attachment[]) => {
    setItems((previous) => [...previous, ...added.filter((a) => !previous.some((p) => p.hash === a.hash))]);
  }, []);

  /** Keeps what the model can take; the first refusal becomes the notice. */
  const admit = useCallback(
    <T>(candidates: T[], kindOf: (candidate: T) => MediaKind): T[] => {
      const kept: T[] = [];
      let problem: string | null = null;
      for (const candidate of candidates) {
        const refusal = capabilityProblem(kindOf(candidate), loaded, models);
        if (refusal) problem ??= refusal;
        else kept.push(candidate);
      }
      if (problem) onNotice(problem);
      return kept;
    },
    [loaded, models, onNotice],
  );

  // Each file is checked by the backend first (damaged, too large, not media), so the user
  // learns a file is broken even when the loaded model could not have used it anyway; then
  // what the model can't take is turned away with the notice.
  const addPaths = useCallback(
    async (paths: string[]) => {
      if (paths.length === 0) return;
      setBusy(true);
      try {
        const checked: Attachment[] = [];
        for (const path of paths) {
          try {
            checked.push(...(await attachPaths([path])));
          } catch (e) {
            onError(`Could not attach: ${errorMessage(e)}`);
          }
        }
        add(admit(checked, (a) => mediaKindOfMime(a.mime)));
      } finally {
        setBusy(false);
      }
    },
    [add, admit, onError],
  );

  const addFiles = useCallback(
    async (files: File[]) => {
      if (files.length === 0) return;
      setBusy(true);
      try {
        const checked: Attachment[] = [];
        for (const file of files) {
          const bytes = new Uint8Array(await file.arrayBuffer());
          try {
            checked.push(await attachBytes(file.name, bytes));
          } catch (e) {
            onError(`Could not attach ${file.name}: ${errorMessage(e)}`);
          }
        }
        add(admit(checked, (a) => mediaKindOfMime(a.mime)));
      } finally {
        setBusy(false);
      }
    },
    [add, admit, onError],
  );

  const remove = useCallback((hash: string) => setItems((previous) => previous.filter((a) => a.hash !== hash)), []);
  const clear = useCallback(() => setItems([]), []);
  const restore = useCallback((restored: Attachment[]) => add(restored), [add]);

  return { items, busy, addPaths, addFiles, remove, clear, restore };
}
