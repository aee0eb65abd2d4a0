import type { MessageId } from '../ipc';

/** "< 2/3 >" between edits or regenerations of one message. */
export function SiblingSwitcher({
  siblings,
  disabled,
  onSelect,
}: {
  siblings: { ids: MessageId[]; index: number };
  disabled: boolean;
  onSelect: (id: MessageId) => void;
}) {
  const { ids, index } = siblings;
  const previous = ids[index - 1];
  const next = ids[index + 1];
  return (
    <span className="sibling-switcher">
      <button
        type="button"
        className="ghost small"
        data-testid="sibling-prev"
        aria-label="Previous version"
        disabled={disabled || previous === undefined}
        onClick={() => previous !== undefined && onSelect(previous)}
      >
        ‹
      </button>
      <span data-testid="sibling-position">
        {index + 1}/{ids.length}
      </span>
      <button
        type="button"
        className="ghost small"
        data-testid="sibling-next"
        aria-label="Next version"
        disabled={disabled || next === undefined}
        onClick={() => next !== undefined && onSelect(next)}
      >
        ›
      </button>
    </span>
  );
}
