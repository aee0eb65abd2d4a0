// Small formatters shared by the sidebar, the model picker and the reply stats.

/** 1536 → "1.5 KB"; sizes of models and attachments, in powers of 1024 like Finder's "GB". */
export function humanSize(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const digits = unit === 0 || value >= 100 ? 0 : 1;
  return `${value.toFixed(digits)} ${units[unit]}`;
}

/** 32768 → "32K"; context lengths read better rounded. */
export function humanTokens(count: number): string {
  if (count >= 1024 && count % 1024 === 0) return `${count / 1024}K`;
  if (count >= 10_000) return `${Math.round(count / 1000)}K`;
  return String(count);
}

/** 134_515_008 → "135M", 4_020_000_000 → "4B": a model's parameters as people name them. */
export function humanParameters(count: number): string {
  const [value, unit] = count >= 1e9 ? [count / 1e9, 'B'] : count >= 1e6 ? [count / 1e6, 'M'] : [count / 1e3, 'K'];
  return `${value >= 10 ? Math.round(value) : Number(value.toFixed(1))}${unit}`;
}

/** A video's length as players show it: 4_200 → "0:04", 3_725_000 → "1:02:05". */
export function clockDuration(ms: number): string {
  const total = Math.round(ms / 1000);
  const [hours, minutes, seconds] = [Math.floor(total / 3600), Math.floor(total / 60) % 60, total % 60];
  const two = (n: number) => String(n).padStart(2, '0');
  return hours > 0 ? `${hours}:${two(minutes)}:${two(seconds)}` : `${minutes}:${two(seconds)}`;
}

/** 180 → "180 ms", 2400 → "2.4 s". */
export function humanDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(1)} s`;
}

/** A date as the sidebar shows it: the time today, the weekday this week, else the date. */
export function shortDate(unixMs: number, now = Date.now()): string {
  const date = new Date(unixMs);
  const dayMs = 24 * 60 * 60 * 1000;
  if (new Date(now).toDateString() === date.toDateString()) {
    return date.toLocaleTimeString(undefined, { hour: 'numeric', minute: '2-digit' });
  }
  if (now - unixMs < 6 * dayMs) return date.toLocaleDateString(undefined, { weekday: 'short' });
  return date.toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
}

/** "⌘" on a Mac, "Ctrl+" elsewhere, for shortcut hints. */
export function modKey(): string {
  const platform = typeof navigator === 'undefined' ? '' : navigator.platform;
  return /Mac|iPhone|iPad/.test(platform) ? '⌘' : 'Ctrl+';
}
