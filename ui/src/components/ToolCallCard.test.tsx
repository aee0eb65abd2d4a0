import { beforeEach, describe, expect, it } from 'vitest';
import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { answered, installBackend, message, toolCall, view } from '../test/fixtures';
import { holdStream, push, renderApp } from '../test/renderApp';
import { callsOf, commands, invoke } from '../test/tauriMock';
import { MessageBubble } from './MessageBubble';
import { ToolCallCard } from './ToolCallCard';

/** Markup a model or a tool might send: none of it may become an element or run. */
const payloads = [
  '<img src=x onerror="window.__pwned=1">',
  '<script>window.__pwned=2</script>',
  '<svg><script>window.__pwned=3</script></svg>',
  '<a href="javascript:window.__pwned=4">x</a>',
  '<iframe src="https://example.com"></iframe>',
  '<div onclick="window.__pwned=5">**not bold**</div>',
];
const hostile = payloads.join('\n');

declare global {
  interface Window {
    __pwned?: number;
  }
}

beforeEach(() => {
  installBackend();
  invoke.mockClear();
  delete window.__pwned;
});

describe('a tool call card', () => {
  it('shows hostile arguments, results and errors as the literal text they are', () => {
    const args = JSON.stringify({ html: hostile });
    const { container } = render(
      <>
        <ToolCallCard
          call={toolCall(5, 0, { tool: '<b>tool</b>', server: '<i>srv</i>', arguments: args, status: 'done', result: answered(hostile) })}
        />
        <ToolCallCard call={toolCall(5, 1, { arguments: `not json ${hostile}`, status: 'failed', error: hostile })} />
      </>,
    );
    const [done, failed] = screen.getAllByTestId('tool-card');
    // JSON arguments come back pretty-printed: the payload inside as a JSON string.
    expect(within(done!).getByTestId('tool-card-args').textContent).toBe(JSON.stringify({ html: hostile }, null, 2));
    expect(within(failed!).getByTestId('tool-card-args').textContent).toBe(`not json ${hostile}`);
    for (const card of [done!, failed!]) {
      const result = within(card).getByTestId('tool-card-result');
      fireEvent.click(result.querySelector('summary')!);
      expect(result.textContent).toContain(hostile);
    }
    expect(done!.textContent).toContain('<b>tool</b>');
    expect(done!.textContent).toContain('on <i>srv</i>');
    expect(container.querySelector('img, script, svg:not(.icon), a, iframe, b, i, [onclick], [onerror]')).toBeNull();
    expect(window.__pwned).toBeUndefined();
  });

  it('asks while a call waits, and sends the answer for that reply and position', async () => {
    commands.set('decide_tool_call', () => null);
    const { rerender } = render(<ToolCallCard call={toolCall(7, 3)} />);
    const card = screen.getByTestId('tool-card');
    expect(card.dataset.status).toBe('awaiting');
    expect(card.dataset.position).toBe('3');
    fireEvent.click(within(card).getByTestId('tool-allow-always'));
    await waitFor(() => expect(callsOf('decide_tool_call')).toEqual([{ reply: 7, position: 3, decision: 'always' }]));
    // Sent once: the buttons wait for the call's next state.
    expect((within(card).getByTestId('tool-allow-once') as HTMLButtonElement).disabled).toBe(true);
    rerender(<ToolCallCard call={toolCall(7, 3, { decision: 'allowed_always', status: 'running' })} />);
    expect(screen.queryByTestId('tool-allow-once')).toBeNull();
    expect(screen.getByTestId('tool-card-status').textContent).toBe('Running…');

    for (const [testId, decision] of [
      ['tool-allow-once', 'once'],
      ['tool-deny', 'deny'],
    ] as const) {
      invoke.mockClear();
      rerender(<ToolCallCard key={decision} call={toolCall(8, 0)} />);
      fireEvent.click(screen.getByTestId(testId));
      await waitFor(() => expect(callsOf('decide_tool_call')).toEqual([{ reply: 8, position: 0, decision }]));
    }
  });

  it('says why a decision could not be sent, and asks again', async () => {
    commands.set('decide_tool_call', () => {
      throw 'That tool call is no longer waiting; its reply was stopped.';
    });
    render(<ToolCallCard call={toolCall(7, 0)} />);
    fireEvent.click(screen.getByTestId('tool-allow-once'));
    expect((await screen.findByRole('alert')).textContent).toContain('no longer waiting');
    expect((screen.getByTestId('tool-allow-once') as HTMLButtonElement).disabled).toBe(false);
  });

  it('says in words what became of calls that did not run, and shows returned images', async () => {
    render(
      <>
        <ToolCallCard call={toolCall(7, 0, { status: 'denied', decision: 'denied' })} />
        <ToolCallCard call={toolCall(7, 1, { status: 'cancelled', decision: 'allowed_once' })} />
        <ToolCallCard call={toolCall(7, 2, { status: 'interrupted', decision: 'auto' })} />
        <ToolCallCard call={toolCall(7, 3, { status: 'done', decision: 'auto', result: answered('', ['img1']) })} />
      </>,
    );
    const words = screen.getAllByTestId('tool-card-status').map((s) => s.textContent);
    expect(words).toEqual([
      'Denied: not run',
      'Cancelled: stopped before it finished',
      'Interrupted: the app closed before it finished (allowed always)',
      'Done (allowed always)',
    ]);
    expect(screen.queryAllByTestId('tool-allow-once')).toHaveLength(0);
    expect(screen.getAllByTestId('tool-card-result')).toHaveLength(1);
    const image = (await screen.findByTestId('tool-card-image')) as HTMLImageElement;
    expect(image.src).toMatch(/^blob:/);
    expect(callsOf('attachment_bytes')).toEqual([{ hash: 'img1' }]);
  });
});

describe('tool calls in a streaming reply', () => {
  it('draws each round text then its cards, replacing a call as it changes', async () => {
    await renderApp();
    const stream = holdStream('send_message');
    fireEvent.change(screen.getByTestId('composer-input'), { target: { value: 'Read my notes' } });
    fireEvent.click(screen.getByTestId('send-button'));
    const user = message(1, 'user', 'Read my notes', { conversation_id: 9 });
    const streaming = { conversation_id: 9, status: 'streaming', parent_id: 1 } as const;
    await push(stream, { kind: 'started', user: view(user), reply: message(2, 'assistant', '', streaming) });
    // The first text is drawn at once, the rest waits for the next draw: the call's event
    // draws it first, so that the card comes after all of the round's text.
    await push(stream, { kind: 'token', text: 'Je lis ' });
    await push(stream, { kind: 'token', text: '« notes » 📄.' });
    const first = 'Je lis « notes » 📄.';
    const offset = new TextEncoder().encode(first).length;
    await push(stream, { kind: 'tool', call: toolCall(2, 0, { content_offset: offset }) });
    const bubble = () => screen.getAllByTestId('message').find((m) => m.dataset.id === '2')!;
    const card = within(bubble()).getByTestId('tool-card');
    expect(card.dataset.status).toBe('awaiting');
    expect(within(bubble()).getByTestId('message-content').querySelector('.markdown')!.textContent).toBe(first);
    await push(stream, {
      kind: 'tool',
      call: toolCall(2, 0, { content_offset: offset, status: 'done', decision: 'allowed_once', result: answered('hi') }),
    });
    expect(
      within(bubble())
        .getAllByTestId('tool-card')
        .map((c) => c.dataset.status),
    ).toEqual(['done']);
    await push(stream, { kind: 'token', text: ' Voilà.' });

    // `done` carries the reply as stored, calls and all.
    const done = message(2, 'assistant', `${first} Voilà.`, {
      conversation_id: 9,
      parent_id: 1,
      tool_calls: [toolCall(2, 0, { content_offset: offset, status: 'done', decision: 'allowed_once', result: answered('hi') })],
    });
    await push(stream, { kind: 'done', reply: done });
    await act(async () => stream.end());
    expect(
      within(bubble())
        .getAllByTestId('tool-card')
        .map((c) => c.dataset.status),
    ).toEqual(['done']);
    // Text, card, text: in that order in the reply.
    const content = within(bubble()).getByTestId('message-content');
    const [before, after] = [...content.querySelectorAll('.markdown')];
    const follows = (a: Node, b: Node) => (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0;
    expect(before!.textContent).toBe(first);
    expect(after!.textContent).toBe('Voilà.');
    expect(follows(before!, within(bubble()).getByTestId('tool-card'))).toBe(true);
    expect(follows(within(bubble()).getByTestId('tool-card'), after!)).toBe(true);
  });
});

describe('a finished reply with tool rounds', () => {
  it("puts each round's reasoning before its text and its cards", () => {
    const [think1, think2] = ['Je dois lire « notes ». ', 'Le fichier dit 🙂.'];
    const bytes = (text: string) => new TextEncoder().encode(text).length;
    const reply = message(2, 'assistant', 'Voilà.', {
      reasoning: think1 + think2,
      reasoning_ms: 1200,
      tool_calls: [toolCall(2, 0, { content_offset: 0, reasoning_offset: bytes(think1), status: 'done', result: answered('hi') })],
    });
    const noop = () => {};
    render(<MessageBubble view={view(reply)} plan={undefined} busy={false} onRegenerate={noop} onEdit={noop} onSelectSibling={noop} />);
    const reasoning = screen.getAllByTestId('reasoning-text');
    expect(reasoning.map((r) => r.textContent)).toEqual([think1.trim(), think2.trim()]);
    const card = screen.getByTestId('tool-card');
    const follows = (a: Node, b: Node) => (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0;
    expect(follows(reasoning[0]!, card) && follows(card, reasoning[1]!)).toBe(true);
    expect(screen.getAllByTestId('reasoning-toggle').map((t) => t.textContent)).toEqual(['Thought for 1.2 s', 'Thoughts']);
  });
});
