// A thinking model's reasoning, folded above its answer: open while the model thinks, closed
// once its answer starts (or the reply ends), with how long it thought. Model text is
// untrusted: it is shown as plain text, never parsed as markdown or HTML.
import { useLayoutEffect, useRef, useState } from 'react';
import { humanDuration } from '../lib/format';

interface Props {
  text: string;
  /** How long the model thought; null while it thinks (or when unknown). */
  ms: number | null;
  /** The model is thinking now: the reply streams and no answer has come yet. */
  thinking: boolean;
  /** Stays open once the model stops: its reply was cut before any answer. */
  keepOpen?: boolean;
}

/** "Thinking…" while the reasoning streams, then "Thought for 3.2 s". */
export function reasoningLabel(thinking: boolean, ms: number | null): string {
  if (thinking) return 'Thinking…';
  return ms === null ? 'Thoughts' : `Thought for ${humanDuration(ms)}`;
}

export function Reasoning({ text, ms, thinking, keepOpen = false }: Props) {
  const shouldOpen = thinking || keepOpen;
  const [open, setOpen] = useState(shouldOpen);
  // Follows the model (open as it starts thinking, closed as it stops, unless the reply was cut
  // before its answer); in between, the reader's own clicks stand. A layout effect, so that no
  // frame (and no script reading the page) sees a finished reply with its section still open.
  const wasOpen = useRef(shouldOpen);
  useLayoutEffect(() => {
    if (wasOpen.current === shouldOpen) return;
    wasOpen.current = shouldOpen;
    setOpen(shouldOpen);
  }, [shouldOpen]);

  return (
    <details
      className="reasoning"
      data-testid="reasoning"
      data-thinking={thinking ? 'true' : undefined}
      open={open}
      onToggle={(event) => setOpen(event.currentTarget.open)}
    >
      <summary data-testid="reasoning-toggle">{reasoningLabel(thinking, ms)}</summary>
      <div className="reasoning-text" data-testid="reasoning-text">
        {text.trim()}
      </div>
    </details>
  );
}
