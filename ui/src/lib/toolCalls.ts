// A reply's tool calls as the window shows them. The one place that reads the fields of the
// store's ToolCall (its shape may still be renamed): components go through these helpers.
import type { Message, ToolCall, ToolCallStatus } from '../ipc';

/** The UTF-16 index (what JavaScript strings count) of a UTF-8 byte offset into `text`, which
 *  is how the store measures `content_offset`. An offset past the end (text not drawn yet) is
 *  the end; one inside a character's bytes rounds up to that character's end. */
export function byteOffsetToIndex(text: string, byteOffset: number): number {
  if (byteOffset <= 0) return 0;
  let bytes = 0;
  let index = 0;
  for (const char of text) {
    if (bytes >= byteOffset) break;
    // One code point: its UTF-8 length, and 1 or 2 UTF-16 units.
    bytes += utf8.encode(char).length;
    index += char.length;
  }
  return index;
}

const utf8 = new TextEncoder();

/** One round of a reply: what the model thought and wrote, then the calls it made after it. */
export interface ReplySegment {
  reasoning: string;
  text: string;
  calls: ToolCall[];
}

/** A reply's reasoning and text split at its calls: each round's followed by that round's
 *  calls, then what came after the last calls (the last segment, whose `calls` is empty). A
 *  reply without calls is one segment. */
export function replySegments(content: string, reasoning: string, calls: readonly ToolCall[]): ReplySegment[] {
  const sorted = [...calls].sort((a, b) => a.position - b.position);
  const segments: ReplySegment[] = [];
  let [textStart, reasoningStart] = [0, 0];
  for (const call of sorted) {
    const last = segments.at(-1);
    if (last && last.calls[0]?.round === call.round) {
      last.calls.push(call);
      continue;
    }
    const textEnd = Math.max(textStart, byteOffsetToIndex(content, call.content_offset));
    const reasoningEnd = Math.max(reasoningStart, byteOffsetToIndex(reasoning, call.reasoning_offset));
    segments.push({ reasoning: reasoning.slice(reasoningStart, reasoningEnd), text: content.slice(textStart, textEnd), calls: [call] });
    [textStart, reasoningStart] = [textEnd, reasoningEnd];
  }
  segments.push({ reasoning: reasoning.slice(reasoningStart), text: content.slice(textStart), calls: [] });
  return segments;
}

/** The calls with `call` in place of the one at its position (or added, in position order). */
export function upsertToolCall(calls: readonly ToolCall[], call: ToolCall): ToolCall[] {
  const others = calls.filter((c) => c.position !== call.position);
  return [...others, call].sort((a, b) => a.position - b.position);
}

/** The arguments as the card shows them: pretty-printed JSON, or the model's text as it wrote
 *  it when that is not JSON. */
/** A message's tool calls (the field is left out of messages that have none). */
export function toolCallsOf(message: Message): readonly ToolCall[] {
  return message.tool_calls ?? [];
}

export function argumentsText(call: ToolCall): string {
  try {
    return JSON.stringify(JSON.parse(call.arguments), null, 2);
  } catch {
    return call.arguments;
  }
}

/** What a finished call gave: the tool's text and images, whether the tool called it an
 *  error, and why the call itself failed. */
export interface CallOutcome {
  text: string | null;
  images: string[];
  toolError: boolean;
  failure: string | null;
}

export function callOutcome(call: ToolCall): CallOutcome {
  return {
    text: call.result?.text ?? null,
    images: call.result?.images ?? [],
    toolError: call.result?.is_error ?? false,
    failure: call.error,
  };
}

export const statusWords: Record<ToolCallStatus, string> = {
  awaiting: 'Waiting for your answer',
  running: 'Running…',
  done: 'Done',
  failed: 'Failed',
  denied: 'Denied: not run',
  cancelled: 'Cancelled: stopped before it finished',
  interrupted: 'Interrupted: the app closed before it finished',
};

/** A call that ran without asking, because its tool is allowed always. */
export function ranWithoutAsking(call: ToolCall): boolean {
  return call.decision === 'auto';
}

/** The card asks the user: the call waits and nobody has answered yet. */
export function needsDecision(call: ToolCall): boolean {
  return call.status === 'awaiting' && call.decision === 'pending';
}
