// Applies the theme: `data-theme` on <html> drives the CSS variables, and the matching
// highlight.js stylesheet is swapped in (a <link> to a bundled file, which the CSP allows).
import { useEffect, useState } from 'react';
import type { Theme } from '../ipc';
import lightCodeTheme from 'highlight.js/styles/github.css?url';
import darkCodeTheme from 'highlight.js/styles/github-dark.css?url';

export type ResolvedTheme = 'light' | 'dark';

const darkQuery = '(prefers-color-scheme: dark)';

function systemTheme(): ResolvedTheme {
  if (typeof window.matchMedia !== 'function') return 'light';
  return window.matchMedia(darkQuery).matches ? 'dark' : 'light';
}

export function resolveTheme(theme: Theme, system: ResolvedTheme): ResolvedTheme {
  return theme === 'system' ? system : theme;
}

function applyTheme(resolved: ResolvedTheme) {
  const root = document.documentElement;
  root.dataset.theme = resolved;
  root.style.colorScheme = resolved;
  let link = document.getElementById('code-theme') as HTMLLinkElement | null;
  if (!link) {
    link = document.createElement('link');
    link.id = 'code-theme';
    link.rel = 'stylesheet';
    document.head.appendChild(link);
  }
  link.href = resolved === 'dark' ? darkCodeTheme : lightCodeTheme;
}

/** Keeps <html> in step with the chosen theme, following the system's while it is 'system'. */
export function useTheme(theme: Theme): ResolvedTheme {
  const [system, setSystem] = useState<ResolvedTheme>(systemTheme);

  useEffect(() => {
    if (typeof window.matchMedia !== 'function') return;
    const query = window.matchMedia(darkQuery);
    const update = () => setSystem(query.matches ? 'dark' : 'light');
    query.addEventListener('change', update);
    return () => query.removeEventListener('change', update);
  }, []);

  const resolved = resolveTheme(theme, system);
  useEffect(() => applyTheme(resolved), [resolved]);
  return resolved;
}
