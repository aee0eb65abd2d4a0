import { useEffect, useId, useRef } from 'react';
import { SHORTCUT_GROUPS, SHORTCUTS, shortcutKeys } from '../lib/shortcuts';

/** The shortcuts page: every keyboard shortcut, from lib/shortcuts. Esc closes it; focus goes back where it was. */
export function ShortcutsDialog({ onClose }: { onClose: () => void }) {
  const titleId = useId();
  const close = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const before = document.activeElement;
    close.current?.focus();
    return () => {
      if (before instanceof HTMLElement && before.isConnected) before.focus();
    };
  }, []);

  return (
    <div
      className="modal-backdrop"
      onMouseDown={(event) => event.target === event.currentTarget && onClose()}
      onKeyDown={(event) => {
        if (event.key !== 'Escape') return;
        // Goes no further: the window's Esc would otherwise also stop a reply.
        event.preventDefault();
        event.stopPropagation();
        onClose();
      }}
    >
      <div className="modal shortcuts" role="dialog" aria-modal="true" aria-labelledby={titleId} data-testid="shortcuts-dialog">
        <header className="modal-header">
          <h2 id={titleId}>Keyboard shortcuts</h2>
        </header>
        <div className="modal-body">
          {SHORTCUT_GROUPS.map((group) => (
            <section key={group} className="shortcuts-group">
              <h3>{group}</h3>
              <dl>
                {SHORTCUTS.filter((s) => s.where === group).map((s) => (
                  <div key={s.id} className="shortcut-row" data-testid="shortcut-row" data-id={s.id}>
                    <dt>
                      <kbd>{shortcutKeys(s.id)}</kbd>
                    </dt>
                    <dd>{s.description}</dd>
                  </div>
                ))}
              </dl>
            </section>
          ))}
        </div>
        <footer className="modal-footer">
          <button ref={close} type="button" data-testid="shortcuts-close" onClick={onClose}>
            Close
          </button>
        </footer>
      </div>
    </div>
  );
}
