// What a context count means for sending (the counts come from the backend's measure_context).
import type { ContextUse } from '../ipc';

/**
 * `fits`: sent whole. `drops-turns`: the engine would leave the oldest messages out to make
 * room. `too-long`: the message alone is past what the model reads; nothing can be sent.
 */
export type ContextVerdict = 'fits' | 'drops-turns' | 'too-long';

export function contextVerdict(use: ContextUse): ContextVerdict {
  if (use.used <= use.limit) return 'fits';
  return use.alone > use.limit ? 'too-long' : 'drops-turns';
}

/** 1234 → "1,234". */
export function tokenCount(count: number): string {
  return count.toLocaleString('en-US');
}
