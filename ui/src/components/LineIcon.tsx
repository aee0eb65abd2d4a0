/** A stroked icon drawn from one SVG path, in the text colour (no icon font or emoji:
 *  not every system font has the glyphs). */
export function LineIcon({ path, size = 18, viewBox = 24, weight = 1.8 }: { path: string; size?: number; viewBox?: number; weight?: number }) {
  return (
    <svg viewBox={`0 0 ${viewBox} ${viewBox}`} width={size} height={size} aria-hidden="true">
      <path d={path} fill="none" stroke="currentColor" strokeWidth={weight} strokeLinecap="round" strokeLinejoin="round" />
    </svg>
  );
}
