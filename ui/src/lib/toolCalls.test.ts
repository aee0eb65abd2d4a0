import { describe, expect, it } from 'vitest';
import { toolCall } from '../test/fixtures';
import { argumentsText, byteOffsetToIndex, replySegments, upsertToolCall } from './toolCalls';

const bytes = (text: string) => new TextEncoder().encode(text).length;

describe('tool calls in a reply', () => {
  it('turns UTF-8 byte offsets into string indexes, exactly, for any script', () => {
    // 1-, 2-, 3- and 4-byte characters; the emoji is 2 UTF-16 units.
    const text = 'aé中😀z';
    expect([0, 1, 3, 6, 10, 11].map((offset) => byteOffsetToIndex(text, offset))).toEqual([0, 1, 2, 3, 5, 6]);
    // Past the end (text not drawn yet): the end.
    expect(byteOffsetToIndex(text, 99)).toBe(text.length);
    // Inside a character's bytes: after that character, never inside a surrogate pair.
    expect(byteOffsetToIndex(text, 7)).toBe(5);
  });

  it('splits a reply into rounds at its calls, each round with its calls', () => {
    const first = 'Je vais lire le fichier « notes » 📄. ';
    const second = '日本語でまとめます。';
    const last = 'Fertig ✅';
    const content = first + second + last;
    const calls = [
      toolCall(2, 2, { round: 1, content_offset: bytes(first + second) }),
      toolCall(2, 0, { round: 0, content_offset: bytes(first) }),
      toolCall(2, 1, { round: 0, content_offset: bytes(first) }),
    ];
    const segments = replySegments(content, '', calls);
    expect(segments.map((s) => s.text)).toEqual([first, second, last]);
    expect(segments.map((s) => s.reasoning)).toEqual(['', '', '']);
    expect(segments.map((s) => s.calls.map((c) => c.position))).toEqual([[0, 1], [2], []]);
    // Without calls: the whole text once.
    expect(replySegments(content, 'hmm', [])).toEqual([{ reasoning: 'hmm', text: content, calls: [] }]);
    // A call made before any text, and text still streaming behind the offsets.
    const early = replySegments('', '', [toolCall(2, 0, { content_offset: 12 })]);
    expect(early.map((s) => s.text)).toEqual(['', '']);
  });

  it("splits a thinking model's reasoning at its calls too", () => {
    const [think1, think2] = ['Il faut lire le fichier… ', 'それで十分。'];
    const calls = [toolCall(2, 0, { content_offset: 0, reasoning_offset: bytes(think1) })];
    const segments = replySegments('Fini.', think1 + think2, calls);
    expect(segments.map((s) => [s.reasoning, s.text])).toEqual([
      [think1, ''],
      [think2, 'Fini.'],
    ]);
  });

  it('replaces a call at its position, or adds it in order', () => {
    const calls = [toolCall(2, 0), toolCall(2, 2)];
    const running = toolCall(2, 0, { status: 'running' });
    expect(upsertToolCall(calls, running).map((c) => [c.position, c.status])).toEqual([
      [0, 'running'],
      [2, 'awaiting'],
    ]);
    expect(upsertToolCall(calls, toolCall(2, 1)).map((c) => c.position)).toEqual([0, 1, 2]);
  });

  it('pretty-prints JSON arguments and keeps other text as the model wrote it', () => {
    expect(argumentsText(toolCall(2, 0, { arguments: '{"a":[1,2]}' }))).toBe('{\n  "a": [\n    1,\n    2\n  ]\n}');
    expect(argumentsText(toolCall(2, 0, { arguments: 'path=/tmp {' }))).toBe('path=/tmp {');
  });
});
