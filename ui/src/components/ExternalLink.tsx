// A link in model output. Following it would navigate the app's own window away, so a click asks
// first, showing the whole address; the backend then opens it in the system browser. The backend
// decides what may be opened (web and mail links) and says why it refuses anything else.
import { useEffect, useId, useRef, useState, type ComponentPropsWithoutRef } from 'react';
import { createPortal } from 'react-dom';
import type { ExtraProps } from 'react-markdown';
import { errorMessage, openLink } from '../ipc';

export function ExternalLink({ node: _node, href, children, ...props }: ComponentPropsWithoutRef<'a'> & ExtraProps) {
  const [asking, setAsking] = useState(false);
  return (
    <>
      <a
        {...props}
        href={href}
        title={href}
        onClick={(event) => {
          event.preventDefault();
          // The sanitiser removes unsafe addresses: such a link has none and opens nothing.
          if (href) setAsking(true);
        }}
      >
        {children}
      </a>
      {asking && href && createPortal(<OpenLinkDialog address={href} onClose={() => setAsking(false)} />, document.body)}
    </>
  );
}

function OpenLinkDialog({ address, onClose }: { address: string; onClose: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const [opening, setOpening] = useState(false);
  const titleId = useId();
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => cancel.current?.focus(), []);

  const open = async () => {
    setOpening(true);
    try {
      await openLink(address);
      onClose();
    } catch (e) {
      setError(errorMessage(e));
      setOpening(false);
    }
  };

  return (
    <div
      className="modal-backdrop"
      onMouseDown={(event) => event.target === event.currentTarget && onClose()}
      onKeyDown={(event) => event.key === 'Escape' && onClose()}
    >
      <div className="modal open-link" role="alertdialog" aria-modal="true" aria-labelledby={titleId} data-testid="open-link-dialog">
        <header className="modal-header">
          <h2 id={titleId}>Open this link in your browser?</h2>
        </header>
        <div className="modal-body">
          <p className="open-link-address" data-testid="open-link-address">
            {address}
          </p>
          {error && (
            <p className="error-text" role="alert" data-testid="open-link-error">
              {error}
            </p>
          )}
        </div>
        <footer className="modal-footer">
          <button ref={cancel} type="button" onClick={onClose}>
            {error ? 'Close' : 'Cancel'}
          </button>
          {!error && (
            <button type="button" className="primary" onClick={open} disabled={opening} data-testid="open-link-confirm">
              Open
            </button>
          )}
        </footer>
      </div>
    </div>
  );
}
