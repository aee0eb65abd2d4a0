// A reply's citations: the document passages its prompt was given (a document too large for the
// context is searched per question), and the side panel that shows one of them.
import { useEffect } from 'react';
import type { ReplySource } from '../ipc';
import { Icon } from './Icon';

/** "report.pdf p. 3", or the name alone for a format without pages. */
export function sourceLabel(source: ReplySource): string {
  return source.page === null ? source.document : `${source.document} p. ${source.page}`;
}

/** "Sources: [1] report.pdf p. 3 [2] …" under a reply; a click opens the passage. */
export function Sources({ sources, onOpen }: { sources: ReplySource[]; onOpen: (source: ReplySource) => void }) {
  return (
    <div className="reply-sources" data-testid="reply-sources">
      <span className="muted">Sources:</span>
      {sources.map((source) => (
        <button
          key={source.number}
          type="button"
          className="ghost small source-link"
          data-testid="source-link"
          title="Show the passage the reply was given"
          onClick={() => onOpen(source)}
        >
          [{source.number}] {sourceLabel(source)}
        </button>
      ))}
    </div>
  );
}

/** One passage beside the chat: its document, its page and its text. Escape closes it. */
export function SourcePanel({ source, onClose }: { source: ReplySource; onClose: () => void }) {
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') onClose();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);
  return (
    <aside className="source-panel" aria-label={`Source ${source.number}`} data-testid="source-panel">
      <header className="source-panel-header">
        <div>
          <h3 data-testid="source-panel-document">
            [{source.number}] {source.document}
          </h3>
          {source.page !== null && (
            <span className="muted" data-testid="source-panel-page">
              Page {source.page}
            </span>
          )}
        </div>
        <button type="button" className="ghost" data-testid="source-panel-close" aria-label="Close the source" onClick={onClose}>
          <Icon name="close" size={14} />
        </button>
      </header>
      <p className="plain-text source-text" data-testid="source-panel-text">
        {source.text}
      </p>
    </aside>
  );
}
