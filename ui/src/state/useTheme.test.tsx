import { afterEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, renderHook } from '@testing-library/react';
import { useTheme } from './useTheme';
import type { Theme } from '../ipc';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

/** A matchMedia whose dark preference the test flips. */
function stubSystem(dark: boolean) {
  const listeners = new Set<() => void>();
  const query = {
    matches: dark,
    addEventListener: (_: string, listener: () => void) => listeners.add(listener),
    removeEventListener: (_: string, listener: () => void) => listeners.delete(listener),
  };
  vi.stubGlobal('matchMedia', () => query);
  return (next: boolean) => {
    query.matches = next;
    listeners.forEach((listener) => listener());
  };
}

describe('useTheme', () => {
  it('follows the system while the theme is system, and a fixed theme otherwise', () => {
    const setSystemDark = stubSystem(false);
    const { rerender } = renderHook(({ theme }: { theme: Theme }) => useTheme(theme), { initialProps: { theme: 'system' as Theme } });
    expect(document.documentElement.dataset.theme).toBe('light');
    act(() => setSystemDark(true));
    expect(document.documentElement.dataset.theme).toBe('dark');
    // (The stylesheet's URL is Vite's to make; tests only see that the link is there.)
    expect(document.getElementById('code-theme')?.getAttribute('rel')).toBe('stylesheet');

    rerender({ theme: 'light' });
    expect(document.documentElement.dataset.theme).toBe('light');
  });
});
