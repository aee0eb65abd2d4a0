// Get models: the curated models, search over the hub, a repository's files (sizes,
// quantization, whether they fit this machine), Download, and the downloads with their progress.
// The hub's endpoint and token are set here too; the token is sent once and never shown again.
import { useEffect, useState } from 'react';
import {
  errorMessage,
  hubSettings,
  repoDetails,
  saveHubSettings,
  searchHub,
  type Download,
  type HubModel,
  type HubSettings,
  type RepoDetails,
} from '../ipc';
import { CATALOG } from '../lib/catalog';
import { humanSize } from '../lib/format';
import type { Downloads } from '../state/useDownloads';
import { ErrorBanner } from './ErrorBanner';
import { Icon } from './Icon';

interface Props {
  downloads: Downloads;
  onLoad: (path: string) => void;
  onClose: () => void;
}

export function GetModels({ downloads, onLoad, onClose }: Props) {
  const [query, setQuery] = useState('');
  const [hits, setHits] = useState<HubModel[] | null>(null);
  const [searching, setSearching] = useState(false);
  const [repo, setRepo] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const search = () => {
    const q = query.trim();
    if (!q) return setHits(null);
    setSearching(true);
    setError(null);
    searchHub(q)
      .then(setHits, (e: unknown) => setError(errorMessage(e)))
      .finally(() => setSearching(false));
  };

  return (
    <div className="modal-backdrop" onMouseDown={(event) => event.target === event.currentTarget && onClose()}>
      <div className="modal get-models" role="dialog" aria-modal="true" aria-label="Get models" data-testid="get-models">
        <header className="modal-header">
          <h2>Get models</h2>
          <button type="button" className="ghost" data-testid="get-models-close" aria-label="Close Get models" onClick={onClose}>
            <Icon name="close" size={14} />
          </button>
        </header>
        <div className="modal-body">
          {error && <ErrorBanner message={error} onDismiss={() => setError(null)} />}
          <DownloadList downloads={downloads} onLoad={onLoad} />
          {repo ? (
            <RepoView repo={repo} downloads={downloads} onBack={() => setRepo(null)} />
          ) : (
            <>
              <form
                className="hub-search"
                onSubmit={(event) => {
                  event.preventDefault();
                  search();
                }}
              >
                <input
                  type="search"
                  data-testid="hub-search"
                  placeholder="Search the hub (e.g. qwen3 gguf)"
                  aria-label="Search the hub"
                  value={query}
                  onChange={(event) => setQuery(event.target.value)}
                />
                <button type="submit" disabled={searching}>
                  {searching ? 'Searching…' : 'Search'}
                </button>
              </form>
              {hits ? <SearchResults hits={hits} onOpen={setRepo} /> : <Catalog onOpen={setRepo} />}
            </>
          )}
          <HubSettingsForm />
        </div>
      </div>
    </div>
  );
}

function Catalog({ onOpen }: { onOpen: (repo: string) => void }) {
  return (
    <section>
      <h3>Models Confab runs</h3>
      <ul className="hub-list" data-testid="catalog">
        {CATALOG.map((model) => (
          <li key={model.repo}>
            <button type="button" className="ghost hub-item" onClick={() => onOpen(model.repo)}>
              <span className="hub-item-name">{model.repo}</span>
              <span className="hub-item-meta">
                {model.note} <span className="badge">{model.format}</span>
                {model.vision && <span className="badge accent">vision</span>}
                {model.audio && <span className="badge accent">audio</span>}
                {model.embedding && <span className="badge accent">embedding model</span>}
              </span>
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

function SearchResults({ hits, onOpen }: { hits: HubModel[]; onOpen: (repo: string) => void }) {
  if (hits.length === 0) return <p className="muted">Nothing found in a format Confab reads (GGUF, safetensors, MLX).</p>;
  return (
    <ul className="hub-list" data-testid="search-results">
      {hits.map((hit) => (
        <li key={hit.id}>
          <button type="button" className="ghost hub-item" onClick={() => onOpen(hit.id)}>
            <span className="hub-item-name">{hit.id}</span>
            <span className="hub-item-meta">
              {hit.formats.map((f) => (
                <span key={f} className="badge">
                  {f}
                </span>
              ))}
              {!hit.runs && <span className="badge">architecture unknown</span>}
              {hit.downloads.toLocaleString()} downloads
            </span>
          </button>
        </li>
      ))}
    </ul>
  );
}

function RepoView({ repo, downloads, onBack }: { repo: string; downloads: Downloads; onBack: () => void }) {
  const [details, setDetails] = useState<RepoDetails | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    repoDetails(repo).then(
      (d) => live && setDetails(d),
      (e: unknown) => live && setError(errorMessage(e)),
    );
    return () => {
      live = false;
    };
  }, [repo]);

  const memory = details ? humanSize(details.memory_bytes) : '';
  const folderFits = details ? (details.files.find((f) => details.model_files.includes(f.name))?.fits ?? true) : true;
  return (
    <section data-testid="repo-view">
      <button type="button" className="ghost small" onClick={onBack}>
        ← Back
      </button>
      <h3>{repo}</h3>
      {error && <p className="error-text">{error}</p>}
      {!details && !error && <p className="muted">Loading…</p>}
      {details && (
        <>
          <p className="muted">
            {details.architecture ?? 'unknown architecture'}
            {details.runs ? '' : ' — not an architecture Confab runs; a download would be refused'}
            {details.gated && ' — gated: accept the licence on the hub and set a token below'}
          </p>
          {details.model_files.length > 0 && (
            <p>
              <button type="button" className="primary" data-testid="download-model" onClick={() => downloads.start(repo)}>
                Download ({humanSize(details.model_bytes)})
              </button>{' '}
              <span className={folderFits ? 'muted' : 'warn-text'}>
                {folderFits ? `fits in this machine's ${memory}` : `too large for this machine's ${memory}`}
              </span>
            </p>
          )}
          <table className="repo-files">
            <tbody>
              {details.files.map((file) => (
                <tr key={file.name}>
                  <td>{file.name}</td>
                  <td>{humanSize(file.size)}</td>
                  <td>{file.quantization ?? ''}</td>
                  <td>
                    {file.gguf && (
                      <>
                        <span className={file.fits ? 'muted' : 'warn-text'}>{file.fits ? 'fits' : 'too large'}</span>{' '}
                        <button type="button" className="small" onClick={() => downloads.start(repo, [file.name])}>
                          Download
                        </button>
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

/** "3 min left", "12 s left". */
function timeLeft(seconds: number | null): string {
  if (seconds === null) return '';
  if (seconds >= 3600) return `${Math.round(seconds / 3600)} h left`;
  if (seconds >= 60) return `${Math.round(seconds / 60)} min left`;
  return `${Math.ceil(seconds)} s left`;
}

function DownloadList({ downloads, onLoad }: { downloads: Downloads; onLoad: (path: string) => void }) {
  if (downloads.items.length === 0) return null;
  return (
    <section>
      <h3>Downloads</h3>
      <ul className="download-list" data-testid="downloads">
        {downloads.items.map((d) => (
          <DownloadRow key={d.id} download={d} downloads={downloads} onLoad={onLoad} />
        ))}
      </ul>
    </section>
  );
}

function DownloadRow({ download: d, downloads, onLoad }: { download: Download; downloads: Downloads; onLoad: (path: string) => void }) {
  const percent = d.total > 0 ? Math.floor((100 * d.bytes) / d.total) : 0;
  const name = d.files.length > 0 ? `${d.repo} · ${d.files.join(', ')}` : d.repo;
  return (
    <li className={`download-row ${d.status}`} data-testid="download-row" data-status={d.status}>
      <div className="download-name">{name}</div>
      <progress max={100} value={d.status === 'done' ? 100 : percent} aria-label={`${name}: ${percent}%`} />
      <div className="download-meta muted" data-testid="download-meta">
        {d.total > 0 && `${humanSize(d.bytes)} of ${humanSize(d.total)}`}
        {d.status === 'running' && d.waiting && ' · waiting for another download of this model (another window, or confab pull) to finish'}
        {d.status === 'running' &&
          !d.waiting &&
          d.bytes_per_second > 0 &&
          ` · ${humanSize(d.bytes_per_second)}/s · ${timeLeft(d.seconds_left)}`}
        {d.status === 'paused' && ' · paused'}
        {d.status === 'done' && ' · done'}
      </div>
      {d.error && (
        <p className="error-text" data-testid="download-error">
          {d.error}
        </p>
      )}
      <div className="download-actions">
        {d.status === 'running' && (
          <button type="button" className="small" onClick={() => downloads.pause(d.id)}>
            Pause
          </button>
        )}
        {(d.status === 'paused' || d.status === 'failed') && (
          <button type="button" className="small" onClick={() => downloads.resume(d.id)}>
            {d.status === 'failed' ? 'Retry' : 'Resume'}
          </button>
        )}
        {d.status === 'done' && d.model_path && (
          <button type="button" className="small primary" data-testid="download-load" onClick={() => onLoad(d.model_path!)}>
            Load
          </button>
        )}
        {d.status !== 'done' && (
          <button type="button" className="small ghost" onClick={() => downloads.cancel(d.id)}>
            Cancel
          </button>
        )}
      </div>
    </li>
  );
}

function HubSettingsForm() {
  const [saved, setSaved] = useState<HubSettings | null>(null);
  const [endpoint, setEndpoint] = useState('');
  const [token, setToken] = useState('');
  const [message, setMessage] = useState<string | null>(null);

  useEffect(() => {
    hubSettings().then(
      (s) => {
        setSaved(s);
        setEndpoint(s.endpoint);
      },
      (e: unknown) => setMessage(errorMessage(e)),
    );
  }, []);

  const save = (newToken: string | null) => {
    saveHubSettings(endpoint, newToken).then(
      (s) => {
        setSaved(s);
        setToken('');
        setMessage('Saved.');
      },
      (e: unknown) => setMessage(errorMessage(e)),
    );
  };

  return (
    <details className="hub-settings" data-testid="hub-settings">
      <summary>Hub and token</summary>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          save(token.trim() ? token : null);
        }}
      >
        <label className="field">
          <span className="field-label">Hub endpoint</span>
          <input
            value={endpoint}
            data-testid="hub-endpoint"
            placeholder={saved?.effective_endpoint ?? 'https://huggingface.co'}
            onChange={(event) => setEndpoint(event.target.value)}
          />
          <span className="muted">Empty: HF_ENDPOINT, else https://huggingface.co. Now: {saved?.effective_endpoint ?? '…'}</span>
        </label>
        <label className="field">
          <span className="field-label">Access token (for gated models)</span>
          <input
            type="password"
            autoComplete="off"
            data-testid="hub-token"
            value={token}
            placeholder={saved?.token_set ? 'A token is set' : 'hf_…'}
            onChange={(event) => setToken(event.target.value)}
          />
          <span className="muted">Kept in the system keychain, never shown again.</span>
        </label>
        <button type="submit" className="small" data-testid="hub-save">
          Save
        </button>{' '}
        {saved?.token_set && (
          <button type="button" className="small ghost" onClick={() => save('')}>
            Remove token
          </button>
        )}{' '}
        {message && <span className="muted">{message}</span>}
      </form>
    </details>
  );
}
