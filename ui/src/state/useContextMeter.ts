// The context meter's counts: the draft is counted a moment after typing stops (the backend
// keeps the conversation's count, so each count costs only the draft's tokens).
import { useCallback, useEffect, useRef, useState } from 'react';
import { measureContext, type ContextUse, type ConversationId } from '../ipc';

/** Typing pauses this long before the draft is counted. */
export const MEASURE_DELAY_MS = 300;

export interface Measured {
  /** What was counted, so that a count for an older draft is never taken for the new one. */
  key: string;
  draft: string;
  use: ContextUse;
}

export interface ContextMeter {
  /** The latest count; null when nothing counts (no local model, or a provider's is picked). */
  measured: Measured | null;
  /** Counts `draft` now, for the check before sending; null when nothing counts. */
  measureNow: (draft: string) => Promise<ContextUse | null>;
}

/**
 * `key` names everything besides the draft that the count depends on (the conversation, its
 * last message, the model): a new key counts again. `attachments` (hashes) are the files
 * waiting in the composer, counted with the draft. While `paused` (a reply is being written,
 * and counting would take CPU from it) nothing is counted and the last count stays shown; the
 * count follows once the pause ends.
 */
export function useContextMeter(
  conversation: ConversationId | null,
  key: string,
  draft: string,
  paused = false,
  attachments: string[] = [],
): ContextMeter {
  const attached = attachments.join(',');
  const fullKey = `${key}|${attached}`;
  const [measured, setMeasured] = useState<Measured | null>(null);
  // Answers can come back out of order: only the latest request's is kept.
  const latest = useRef(0);

  const measure = useCallback(
    async (text: string): Promise<ContextUse | null> => {
      const request = ++latest.current;
      let use: ContextUse | null = null;
      try {
        use = await measureContext(conversation, text, attached ? attached.split(',') : []);
      } catch {
        /* No count: the meter hides, and sending goes ahead (the backend still checks). */
      }
      if (request === latest.current) setMeasured(use ? { key: fullKey, draft: text, use } : null);
      return use;
    },
    [conversation, fullKey, attached],
  );

  useEffect(() => {
    if (paused) return;
    const timer = setTimeout(() => void measure(draft), MEASURE_DELAY_MS);
    return () => clearTimeout(timer);
  }, [measure, draft, paused]);

  return { measured: paused || measured?.key === fullKey ? measured : null, measureNow: measure };
}
