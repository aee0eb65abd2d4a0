import { beforeEach, describe, expect, it } from 'vitest';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { conversation, installBackend } from '../test/fixtures';
import { renderApp } from '../test/renderApp';
import { commands } from '../test/tauriMock';
import { SHORTCUTS, shortcutKeys, withShortcut } from '../lib/shortcuts';

function withChats(count: number) {
  const items = Array.from({ length: count }, (_, i) => conversation(i + 1, i === 0 ? 'First chat' : `Chat ${i + 1}`));
  commands.set('list_conversations', () => ({ conversations: items, next: null }));
}

beforeEach(() => {
  installBackend();
});

/** The Tab stops in document order (what Tab visits in a page with no positive tabindex). */
function tabStops(): HTMLElement[] {
  const candidates = document.querySelectorAll<HTMLElement>('a[href], button, input, textarea, select, [tabindex]');
  return Array.from(candidates).filter(
    (el) => el.tabIndex >= 0 && !(el as HTMLButtonElement).disabled && !el.hidden && (el as HTMLInputElement).type !== 'hidden',
  );
}

const input = () => screen.getByTestId('composer-input');
const rows = () => screen.getAllByTestId('conversation-item').map((row) => row.querySelector<HTMLElement>('.conversation-open')!);

describe('skip link', () => {
  it('is the first Tab stop and puts focus in the message box', async () => {
    withChats(8);
    await renderApp();
    const skip = screen.getByTestId('skip-link');
    expect(skip.textContent).toBe('Skip to message box');
    expect(tabStops()[0]).toBe(skip);
    skip.focus();
    fireEvent.click(skip);
    expect(document.activeElement).toBe(input());
  });

  it('keeps the chat list one Tab stop, whatever the number of chats', async () => {
    withChats(1);
    const one = await renderApp();
    const withOne = tabStops().indexOf(input());
    one.unmount();
    withChats(8);
    await renderApp();
    await waitFor(() => expect(screen.getAllByTestId('conversation-item')).toHaveLength(8));
    expect(tabStops().indexOf(input())).toBe(withOne);
    expect(rows().filter((row) => row.tabIndex === 0)).toHaveLength(1);
    for (const button of screen.getAllByRole('button', { name: /^(Rename|Delete)$/ })) expect(button.tabIndex).toBe(-1);
  });
});

describe('chat rows', () => {
  it('move with the arrows and reach their actions from the focused row', async () => {
    withChats(8);
    await renderApp();
    await waitFor(() => expect(screen.getAllByTestId('conversation-item')).toHaveLength(8));
    rows()[0]!.focus();
    fireEvent.keyDown(rows()[0]!, { key: 'ArrowDown' });
    expect(document.activeElement).toBe(rows()[1]);
    // The focused row becomes the list's one Tab stop.
    expect(rows()[1]!.tabIndex).toBe(0);
    expect(rows()[0]!.tabIndex).toBe(-1);
    fireEvent.keyDown(rows()[1]!, { key: 'End' });
    expect(document.activeElement).toBe(rows()[7]);
    fireEvent.keyDown(rows()[7]!, { key: 'Home' });
    expect(document.activeElement).toBe(rows()[0]);

    const first = screen.getAllByTestId('conversation-item')[0]!;
    fireEvent.keyDown(rows()[0]!, { key: 'ArrowRight' });
    expect(document.activeElement).toBe(within(first).getByRole('button', { name: 'Rename' }));
    fireEvent.keyDown(document.activeElement!, { key: 'ArrowRight' });
    expect(document.activeElement).toBe(within(first).getByRole('button', { name: 'Delete' }));
    fireEvent.keyDown(document.activeElement!, { key: 'ArrowLeft' });
    fireEvent.keyDown(document.activeElement!, { key: 'ArrowLeft' });
    expect(document.activeElement).toBe(rows()[0]);
    fireEvent.keyDown(rows()[0]!, { key: 'ContextMenu' });
    expect(document.activeElement).toBe(within(first).getByRole('button', { name: 'Rename' }));

    // Delete asks first, with the focus on the confirming button; Esc takes it back.
    rows()[0]!.focus();
    fireEvent.keyDown(rows()[0]!, { key: 'Delete' });
    const confirm = await within(first).findByRole('button', { name: 'Confirm delete' });
    await waitFor(() => expect(document.activeElement).toBe(confirm));
    fireEvent.keyDown(confirm, { key: 'Escape' });
    await waitFor(() => expect(document.activeElement).toBe(rows()[0]));

    // F2 renames; Esc cancels and the focus comes back to the row.
    fireEvent.keyDown(rows()[0]!, { key: 'F2' });
    const rename = await screen.findByTestId('rename-input');
    fireEvent.keyDown(rename, { key: 'Escape' });
    await waitFor(() => expect(document.activeElement).toBe(rows()[0]));
  });
});

describe('shortcuts page', () => {
  it('opens on ? outside text fields, lists every shortcut, closes on Esc and gives the focus back', async () => {
    await renderApp();
    const settingsButton = screen.getByTestId('settings-button');
    settingsButton.focus();
    fireEvent.keyDown(settingsButton, { key: '?' });
    const dialog = await screen.findByTestId('shortcuts-dialog');
    const listed = within(dialog).getAllByTestId('shortcut-row');
    expect(listed.map((row) => row.dataset.id)).toEqual(expect.arrayContaining(SHORTCUTS.map((s) => s.id)));
    expect(listed).toHaveLength(SHORTCUTS.length);
    expect(within(dialog).getByText(shortcutKeys('newChat'))).toBeTruthy();
    expect(document.activeElement).toBe(screen.getByTestId('shortcuts-close'));
    fireEvent.keyDown(document.activeElement!, { key: 'Escape' });
    await waitFor(() => expect(screen.queryByTestId('shortcuts-dialog')).toBeNull());
    expect(document.activeElement).toBe(settingsButton);
  });

  it('leaves ? to text fields, and opens from its button too', async () => {
    await renderApp();
    input().focus();
    fireEvent.keyDown(input(), { key: '?' });
    expect(screen.queryByTestId('shortcuts-dialog')).toBeNull();
    const button = screen.getByTestId('shortcuts-button');
    button.focus();
    fireEvent.click(button);
    await screen.findByTestId('shortcuts-dialog');
    fireEvent.click(screen.getByTestId('shortcuts-close'));
    await waitFor(() => expect(screen.queryByTestId('shortcuts-dialog')).toBeNull());
    expect(document.activeElement).toBe(button);
  });
});

describe('the list of shortcuts', () => {
  it('names each shortcut once, and is what the tooltips say', async () => {
    expect(new Set(SHORTCUTS.map((s) => s.id)).size).toBe(SHORTCUTS.length);
    await renderApp();
    expect(screen.getByTestId('new-chat').title).toBe(withShortcut('New chat', 'newChat'));
    expect(screen.getByTestId('search-input').getAttribute('placeholder')).toBe(withShortcut('Search', 'search'));
    expect(screen.getByTestId('settings-button').title).toBe(withShortcut('Settings', 'settings'));
    expect(screen.getByTestId('shortcuts-button').title).toBe(withShortcut('Keyboard shortcuts', 'shortcuts'));
    expect(shortcutKeys('newChat')).toMatch(/^(Ctrl\+|⌘)N$/);
  });
});
