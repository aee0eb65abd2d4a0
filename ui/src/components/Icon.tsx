/** Confab's one icon set: stroked paths on a 24-unit grid, drawn in the text colour. No icon font
 *  or emoji, whose glyphs not every system font has (Linux showed an empty box for ＋). */
const paths = {
  plus: 'M12 5v14M5 12h14',
  pencil: 'M4 20h4L18.5 9.5a2.1 2.1 0 00-3-3L5 17v3zM13.5 8.5l2 2',
  trash: 'M4 7h16M9.5 7V4.5h5V7M6 7l1 13h10l1-13M10 11v5.5M14 11v5.5',
  close: 'M6.5 6.5l11 11M17.5 6.5l-11 11',
  paperclip: 'M21 11.5l-8.6 8.6a5.5 5.5 0 01-7.8-7.8l8.6-8.6a3.7 3.7 0 015.2 5.2l-8.6 8.6a1.8 1.8 0 01-2.6-2.6l7.9-7.9',
  sliders: 'M4 7h10M18 7h2M4 17h4M12 17h8M14 4v6M8 14v6',
  sidebar: 'M4 5h16v14H4zM9.5 5v14',
  folder: 'M3 6.5V18h18V8.5h-9L10 6H3.5z',
  document: 'M6 3.5h8l4 4V20.5H6zM14 3.5v4h4M9 12h6M9 15.5h6',
  up: 'M12 19V5M6 11l6-6 6 6',
  video: 'M3.5 6.5h11v11h-11zM14.5 10.5l6-3.5v10l-6-3.5',
  mic: 'M12 3.5a3 3 0 013 3v5a3 3 0 01-6 0v-5a3 3 0 013-3zM6 11.5a6 6 0 0012 0M12 17.5v3',
  stop: 'M7 7h10v10H7z',
  wrench: 'M14.5 6.5a4 4 0 005 5L21 13a6 6 0 01-7.4 1.9L7 21.5a2.1 2.1 0 01-3-3l6.6-6.6A6 6 0 0112.5 4.5z',
} as const;

export type IconName = keyof typeof paths;

export function Icon({ name, size = 18 }: { name: IconName; size?: number }) {
  return (
    <svg className="icon" viewBox="0 0 24 24" width={size} height={size} aria-hidden="true">
      <path d={paths[name]} fill="none" stroke="currentColor" strokeWidth={1.8} strokeLinecap="round" strokeLinejoin="round" />
    </svg>
  );
}
