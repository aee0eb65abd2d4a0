import { modKey } from './format';

/** One keyboard shortcut: what the tooltips name and the shortcuts page lists. */
export interface Shortcut {
  id: ShortcutId;
  /** The keys, `Mod+` standing for Ctrl+ (⌘ on a Mac). */
  keys: string;
  description: string;
  /** Where it works. */
  where: ShortcutGroup;
}

export type ShortcutGroup = 'Anywhere' | 'Message box' | 'Chat list' | 'Editing';

export type ShortcutId =
  | 'newChat'
  | 'search'
  | 'settings'
  | 'shortcuts'
  | 'record'
  | 'escape'
  | 'send'
  | 'newline'
  | 'skip'
  | 'rowMove'
  | 'rowEnds'
  | 'rowActions'
  | 'rowRename'
  | 'rowDelete'
  | 'clearSearch'
  | 'saveEdit'
  | 'cancelEdit';

/** Every keyboard shortcut of the app, the one place that names them. */
export const SHORTCUTS: readonly Shortcut[] = [
  { id: 'newChat', keys: 'Mod+N', description: 'New chat', where: 'Anywhere' },
  { id: 'search', keys: 'Mod+K', description: 'Search past chats', where: 'Anywhere' },
  { id: 'settings', keys: 'Mod+,', description: 'Settings', where: 'Anywhere' },
  { id: 'shortcuts', keys: '?', description: 'This list of shortcuts (outside text fields)', where: 'Anywhere' },
  { id: 'record', keys: 'Mod+Shift+M', description: 'Start or stop recording from the microphone', where: 'Anywhere' },
  {
    id: 'escape',
    keys: 'Esc',
    description: 'Close the open dialog or menu; otherwise cancel a recording or stop a reply',
    where: 'Anywhere',
  },
  { id: 'skip', keys: 'Tab', description: 'From the top of the window: “Skip to message box”', where: 'Anywhere' },
  { id: 'send', keys: 'Enter', description: 'Send', where: 'Message box' },
  { id: 'newline', keys: 'Shift+Enter', description: 'New line', where: 'Message box' },
  { id: 'rowMove', keys: '↑ / ↓', description: 'Previous or next chat', where: 'Chat list' },
  { id: 'rowEnds', keys: 'Home / End', description: 'First or last chat', where: 'Chat list' },
  { id: 'rowActions', keys: '→ / ← or Menu', description: 'Reach a chat’s Rename and Delete buttons, and back', where: 'Chat list' },
  { id: 'rowRename', keys: 'F2', description: 'Rename the chat', where: 'Chat list' },
  { id: 'rowDelete', keys: 'Delete', description: 'Delete the chat (asks first)', where: 'Chat list' },
  { id: 'clearSearch', keys: 'Esc', description: 'Clear the search', where: 'Chat list' },
  { id: 'saveEdit', keys: 'Enter', description: 'Save a rename or an edited message', where: 'Editing' },
  { id: 'cancelEdit', keys: 'Esc', description: 'Cancel a rename or an edit', where: 'Editing' },
];

export const SHORTCUT_GROUPS: readonly ShortcutGroup[] = ['Anywhere', 'Message box', 'Chat list', 'Editing'];

/** The keys of a shortcut as this platform writes them: "Ctrl+N", "⌘N". */
export function shortcutKeys(id: ShortcutId): string {
  const shortcut = SHORTCUTS.find((s) => s.id === id);
  if (!shortcut) throw new Error(`no shortcut ${id}`);
  return shortcut.keys.replace('Mod+', modKey());
}

/** A tooltip naming its shortcut: "New chat (Ctrl+N)". */
export function withShortcut(label: string, id: ShortcutId): string {
  return `${label} (${shortcutKeys(id)})`;
}

/** True where a typed "?" is text, not the shortcut. */
export function isTextField(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  if (target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement) return true;
  if (target instanceof HTMLInputElement) {
    return !['button', 'checkbox', 'radio', 'range', 'submit', 'reset', 'file', 'color'].includes(target.type);
  }
  return false;
}
