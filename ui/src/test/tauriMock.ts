// Stand-ins for @tauri-apps/api in tests: `invoke` answers from a table of fake commands,
// `Channel` is a plain object whose onmessage the test calls, and event listeners are kept
// so that a test can emit backend events.
import { vi } from 'vitest';
import type { CommandName } from '../ipc.generated';

export class Channel<T> {
  onmessage: (message: T) => void = () => {};
}

export type CommandHandler = (args: Record<string, unknown>) => unknown;

/** Fake commands by name: only names the app really has (ipc.generated.ts). */
export const commands = new Map<CommandName, CommandHandler>();

export const invoke = vi.fn(async (command: CommandName, args: Record<string, unknown> = {}) => {
  const handler = commands.get(command);
  if (!handler) throw `unknown command ${command}`;
  return handler(args);
});

export const listeners = new Map<string, (event: { payload: unknown }) => void>();

export const listen = vi.fn(async (name: string, handler: (event: { payload: unknown }) => void) => {
  listeners.set(name, handler);
  return () => listeners.delete(name);
});

/** Emits a backend event to whoever listens. */
export function emit(name: string, payload: unknown) {
  listeners.get(name)?.({ payload });
}

export let dragDropHandler: ((event: { payload: unknown }) => void) | null = null;

export const getCurrentWebview = vi.fn(() => ({
  onDragDropEvent: async (handler: (event: { payload: unknown }) => void) => {
    dragDropHandler = handler;
    return () => {
      dragDropHandler = null;
    };
  },
}));

/** The arguments of the last call of `command`. */
export function lastArgs(command: CommandName): Record<string, unknown> | undefined {
  const call = [...invoke.mock.calls].reverse().find(([name]) => name === command);
  return call?.[1];
}

export function callsOf(command: CommandName): Record<string, unknown>[] {
  return invoke.mock.calls.filter(([name]) => name === command).map(([, args]) => args ?? {});
}
