import type { SearchHit, SnippetPart } from '../ipc';

/** A snippet with its matches marked; every part is text, never HTML. */
export function Snippet({ parts }: { parts: SnippetPart[] }) {
  return (
    <span className="snippet">
      {parts.map((part, index) => (part.highlight ? <mark key={index}>{part.text}</mark> : <span key={index}>{part.text}</span>))}
    </span>
  );
}

export function SearchResults({
  hits,
  searching,
  onOpen,
}: {
  hits: SearchHit[] | null;
  searching: boolean;
  onOpen: (hit: SearchHit) => void;
}) {
  if (hits === null || (searching && hits.length === 0)) return <p className="sidebar-empty muted">Searching…</p>;
  if (hits.length === 0) return <p className="sidebar-empty muted">No messages match.</p>;
  return (
    <ul className="search-results">
      {hits.map((hit) => (
        <li key={hit.message_id}>
          <button type="button" className="search-result" data-testid="search-result" data-id={hit.message_id} onClick={() => onOpen(hit)}>
            <span className="search-result-title">{hit.conversation_title || 'New chat'}</span>
            <Snippet parts={hit.snippet} />
          </button>
        </li>
      ))}
    </ul>
  );
}
