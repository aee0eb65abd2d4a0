import { beforeEach, describe, expect, it } from 'vitest';
import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import { callsOf, commands, invoke } from '../test/tauriMock';
import { Markdown } from './Markdown';

beforeEach(() => {
  invoke.mockClear();
  commands.clear();
  commands.set('open_link', () => undefined);
});

describe('links in a reply', () => {
  it('ask first, showing the whole address, and open only when confirmed', async () => {
    const address = 'https://example.com/a/long/path?query=1#part';
    render(<Markdown text={`See [the docs](${address}).`} />);
    fireEvent.click(screen.getByRole('link', { name: 'the docs' }));
    const dialog = screen.getByRole('alertdialog', { name: 'Open this link in your browser?' });
    expect(screen.getByTestId('open-link-address').textContent).toBe(address);
    expect(callsOf('open_link')).toHaveLength(0);
    // Cancel is focused, so Enter does not open by accident.
    expect(document.activeElement?.textContent).toBe('Cancel');
    fireEvent.click(screen.getByTestId('open-link-confirm'));
    await waitFor(() => expect(dialog.isConnected).toBe(false));
    expect(callsOf('open_link')).toEqual([{ url: address }]);
  });

  it('open nothing when cancelled, by the button or Esc', () => {
    render(<Markdown text={'[a](https://example.com/a)'} />);
    fireEvent.click(screen.getByRole('link', { name: 'a' }));
    fireEvent.click(screen.getByText('Cancel'));
    expect(screen.queryByTestId('open-link-dialog')).toBeNull();
    fireEvent.click(screen.getByRole('link', { name: 'a' }));
    fireEvent.keyDown(screen.getByTestId('open-link-dialog'), { key: 'Escape' });
    expect(screen.queryByTestId('open-link-dialog')).toBeNull();
    expect(callsOf('open_link')).toHaveLength(0);
  });

  it('show why the backend refused an address', async () => {
    commands.set('open_link', () => {
      throw 'Confab did not open “irc://irc.example.com/chat”: only web (http, https) and email (mailto) links are opened.';
    });
    render(<Markdown text={'[chat](irc://irc.example.com/chat)'} />);
    fireEvent.click(screen.getByRole('link', { name: 'chat' }));
    fireEvent.click(screen.getByTestId('open-link-confirm'));
    expect((await screen.findByTestId('open-link-error')).textContent).toContain('only web (http, https) and email (mailto)');
    expect(screen.queryByTestId('open-link-confirm')).toBeNull();
    fireEvent.click(screen.getByText('Close'));
    expect(screen.queryByTestId('open-link-dialog')).toBeNull();
  });

  it('never ask for a link the sanitiser emptied', () => {
    render(<Markdown text={'[x](javascript:alert(1))'} />);
    fireEvent.click(screen.getByText('x'));
    expect(screen.queryByTestId('open-link-dialog')).toBeNull();
    expect(callsOf('open_link')).toHaveLength(0);
  });
});
