import { beforeEach, describe, expect, it } from 'vitest';
import {
  attachBytes,
  attachmentBytes,
  editMessage,
  listConversations,
  regenerate,
  renameConversation,
  saveSettings,
  sendMessage,
  stopReply,
} from './ipc';
import { settings } from './test/fixtures';
import { Channel, commands, invoke, lastArgs } from './test/tauriMock';

beforeEach(() => {
  commands.clear();
  invoke.mockClear();
});

describe('ipc', () => {
  it('names commands and arguments as the backend expects', async () => {
    commands.set('list_conversations', () => ({ conversations: [], next: null }));
    commands.set('rename_conversation', () => null);
    commands.set('send_message', () => null);
    commands.set('regenerate', () => null);
    commands.set('edit_message', () => null);
    commands.set('stop_reply', () => null);
    commands.set('save_settings', (args) => args.settings);

    await listConversations({ updated_at: 5, id: 2 }, 50);
    expect(lastArgs('list_conversations')).toEqual({ cursor: { updated_at: 5, id: 2 }, limit: 50 });

    await renameConversation(3, 'Trip');
    expect(lastArgs('rename_conversation')).toEqual({ id: 3, title: 'Trip' });

    await sendMessage(7, 'hi', ['h1'], null, () => {});
    const send = lastArgs('send_message');
    expect(send).toMatchObject({ conversation: 7, text: 'hi', attachments: ['h1'], thinking: null });
    expect(send?.channel).toBeInstanceOf(Channel);

    await regenerate(9, () => {});
    expect(lastArgs('regenerate')).toMatchObject({ reply: 9 });
    await editMessage(4, 'new', () => {});
    expect(lastArgs('edit_message')).toMatchObject({ message: 4, text: 'new' });
    await stopReply(7);
    expect(lastArgs('stop_reply')).toEqual({ conversation: 7 });
    expect(await saveSettings(settings)).toEqual(settings);
  });

  it('hands reply events from the channel to the handler', async () => {
    const events: unknown[] = [];
    commands.set('send_message', (args) => {
      (args.channel as Channel<unknown>).onmessage({ kind: 'token', text: 'Hel' });
      return null;
    });
    await sendMessage(1, 'hi', [], null, (event) => events.push(event));
    expect(events).toEqual([{ kind: 'token', text: 'Hel' }]);
  });

  it('sends bytes as a number array and reads them back from either shape', async () => {
    commands.set('attach_bytes', () => ({}));
    await attachBytes('a.png', new Uint8Array([1, 2, 255]));
    expect(lastArgs('attach_bytes')).toEqual({ name: 'a.png', bytes: [1, 2, 255] });

    commands.set('attachment_bytes', () => [4, 5]);
    expect(Array.from(await attachmentBytes('h'))).toEqual([4, 5]);
    commands.set('attachment_bytes', () => new Uint8Array([6]).buffer);
    expect(Array.from(await attachmentBytes('h'))).toEqual([6]);
  });

  it('turns string, Error and other rejections into Errors with the message', async () => {
    commands.set('rename_conversation', () => {
      throw 'title must not be empty';
    });
    await expect(renameConversation(1, '')).rejects.toThrow('title must not be empty');

    commands.set('rename_conversation', () => {
      throw new Error('boom');
    });
    await expect(renameConversation(1, 'x')).rejects.toThrow('boom');

    commands.set('rename_conversation', () => {
      throw 42;
    });
    await expect(renameConversation(1, 'x')).rejects.toThrow('42');
  });
});
