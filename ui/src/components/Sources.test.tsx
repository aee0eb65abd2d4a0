import { beforeEach, describe, expect, it } from 'vitest';
import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import type { ReplySource } from '../ipc';
import { installBackend, message, models, pdfAttachment, settings, view } from '../test/fixtures';
import { commands, emit, lastArgs } from '../test/tauriMock';
import { AttachmentPreview } from './AttachmentPreview';
import { MessageList } from './MessageList';
import { holdStream, push, renderApp } from '../test/renderApp';
import { sourceLabel } from './Sources';

const hash = 'ab'.repeat(32);
const sources: ReplySource[] = [
  { number: 1, attachment: hash, document: 'report.pdf', page: 3, text: 'Sales grew 12% in the third quarter.' },
  { number: 2, attachment: hash, document: 'notes.md', page: null, text: 'Costs fell.' },
];

function list(views = [view(message(1, 'user', 'What grew?')), { ...view(message(2, 'assistant', 'Sales [1].')), sources }]) {
  return (
    <MessageList
      conversationId={1}
      messages={views}
      plans={new Map()}
      busy={false}
      empty={null}
      focusMessage={null}
      onRegenerate={() => {}}
      onContinue={() => {}}
      onEdit={() => {}}
      onSelectSibling={() => {}}
    />
  );
}

beforeEach(() => installBackend());

describe('citations', () => {
  it('show under the reply they were given to, by document and page', () => {
    render(list());
    const replies = screen.getAllByTestId('message');
    expect(within(replies[0]!).queryByTestId('reply-sources')).toBeNull();
    const links = within(replies[1]!).getAllByTestId('source-link');
    expect(links.map((link) => link.textContent)).toEqual(['[1] report.pdf p. 3', '[2] notes.md']);
    expect(sourceLabel(sources[1]!)).toBe('notes.md');
  });

  it('open the passage in a side panel with its page and text; Escape and the close button shut it', () => {
    const { rerender } = render(list());
    expect(screen.queryByTestId('source-panel')).toBeNull();
    fireEvent.click(screen.getAllByTestId('source-link')[0]!);
    const panel = screen.getByTestId('source-panel');
    expect(within(panel).getByTestId('source-panel-document').textContent).toBe('[1] report.pdf');
    expect(within(panel).getByTestId('source-panel-page').textContent).toBe('Page 3');
    expect(within(panel).getByTestId('source-panel-text').textContent).toBe('Sales grew 12% in the third quarter.');

    fireEvent.click(screen.getAllByTestId('source-link')[1]!);
    expect(screen.getByTestId('source-panel-document').textContent).toBe('[2] notes.md');
    expect(screen.queryByTestId('source-panel-page')).toBeNull();
    fireEvent.keyDown(window, { key: 'Escape' });
    expect(screen.queryByTestId('source-panel')).toBeNull();

    fireEvent.click(screen.getAllByTestId('source-link')[0]!);
    fireEvent.click(screen.getByTestId('source-panel-close'));
    expect(screen.queryByTestId('source-panel')).toBeNull();

    // Another chat opened: its messages have no panel open.
    fireEvent.click(screen.getAllByTestId('source-link')[0]!);
    rerender(
      <MessageList
        conversationId={2}
        messages={[]}
        plans={new Map()}
        busy={false}
        empty={null}
        focusMessage={null}
        onRegenerate={() => {}}
        onContinue={() => {}}
        onEdit={() => {}}
        onSelectSibling={() => {}}
      />,
    );
    expect(screen.queryByTestId('source-panel')).toBeNull();
  });
});

describe('a streamed reply', () => {
  it('shows the sources the backend says its prompt was given', async () => {
    await renderApp();
    commands.set('conversation_messages', () => [view(message(1, 'user', 'Hi')), view(message(2, 'assistant', 'Hello!'))]);
    fireEvent.click(within(screen.getByTestId('conversation-item')).getByText('First chat'));
    await waitFor(() => expect(screen.getAllByTestId('message')).toHaveLength(2));
    const stream = holdStream('send_message');
    fireEvent.change(screen.getByTestId('composer-input'), { target: { value: 'What grew?' } });
    fireEvent.keyDown(screen.getByTestId('composer-input'), { key: 'Enter' });
    const reply = message(4, 'assistant', '', { status: 'streaming', parent_id: 3 });
    await push(stream, { kind: 'started', user: view(message(3, 'user', 'What grew?', { parent_id: 2 })), reply });
    await push(stream, { kind: 'sources', reply: 4, sources });
    await push(stream, { kind: 'done', reply: { ...reply, status: 'complete', content: 'Sales [1].' } });
    const answered = () => screen.getAllByTestId('message').find((m) => m.dataset.id === '4')!;
    await waitFor(() => expect(within(answered()).getAllByTestId('source-link')).toHaveLength(2));
    expect(within(answered()).getByTestId('reply-sources').textContent).toBe('Sources:[1] report.pdf p. 3[2] notes.md');
  });
});

describe('a document being indexed', () => {
  it('shows a progress bar on its chip until the index is made', async () => {
    render(<AttachmentPreview attachment={pdfAttachment} />);
    expect(screen.queryByTestId('index-progress')).toBeNull();
    act(() => emit('document-index', { hash: 'another', embedded: 1, passages: 2, done: false }));
    expect(screen.queryByTestId('index-progress')).toBeNull();
    act(() => emit('document-index', { hash: pdfAttachment.hash, embedded: 32, passages: 300, done: false }));
    const bar = screen.getByTestId('index-progress') as HTMLProgressElement;
    expect([bar.value, bar.max]).toEqual([32, 300]);
    act(() => emit('document-index', { hash: pdfAttachment.hash, embedded: 300, passages: 300, done: true }));
    expect(screen.queryByTestId('index-progress')).toBeNull();
  });
});

describe('the embedding model setting', () => {
  it('offers embedding models only, the first found by default, and saves the one picked', async () => {
    const embedder = { ...models[1]!, name: 'Qwen3-Embedding-0.6B', path: '/models/qwen3-embedding', embedding: true };
    commands.set('list_models', () => [...models, embedder]);
    commands.set('save_settings', (args) => args.settings);
    await renderApp();
    fireEvent.click(screen.getByTestId('settings-button'));
    const select = (await screen.findByTestId('setting-embedding_model')) as HTMLSelectElement;
    await waitFor(() => expect(select.options).toHaveLength(2));
    expect([...select.options].map((o) => o.textContent)).toEqual([
      'The first found (Qwen3-Embedding-0.6B)',
      'Qwen3-Embedding-0.6B · embedding model',
    ]);
    fireEvent.change(select, { target: { value: '/models/qwen3-embedding' } });
    fireEvent.click(screen.getByTestId('settings-save'));
    await waitFor(() => expect(lastArgs('save_settings')).toBeDefined());
    expect((lastArgs('save_settings')!.settings as typeof settings).embedding_model).toBe('/models/qwen3-embedding');
  });

  it('says how to get one when none is found', async () => {
    await renderApp();
    fireEvent.click(screen.getByTestId('settings-button'));
    await screen.findByTestId('setting-embedding_model');
    await waitFor(() => expect(screen.getByText(/None found: get Qwen3-Embedding-0.6B in Get models/)).toBeTruthy());
  });
});
