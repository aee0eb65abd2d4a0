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

/** Room a draft's turn takes besides its own tokens (the template's markup around it). */
const TURN_MARKUP_TOKENS = 32;

/**
 * Whether `draft` fits for sure, from an earlier count of the same chat: tokenizers make at
 * most one token per UTF-8 byte, so the draft adds no more than its bytes. Sending then needs
 * no fresh count, which would hold up the reply.
 */
export function surelyFits(earlier: ContextUse, draft: string): boolean {
  return earlier.used + new TextEncoder().encode(draft).length + TURN_MARKUP_TOKENS <= earlier.limit;
}

/** 1234 → "1,234". */
export function tokenCount(count: number): string {
  return count.toLocaleString('en-US');
}
