// Settings › Tools: the MCP servers whose tools chats may call. Each change is saved at once,
// outside the settings form. Environment values and header values are secrets: they go to the
// secret store and never come back to the page, which knows only their names.
import { useEffect, useState, type KeyboardEvent } from 'react';
import {
  errorMessage,
  importToolServers,
  listToolServers,
  onToolServers,
  removeToolServer,
  restartToolServer,
  saveToolServer,
  setToolAlwaysAllowed,
  setToolEnabled,
  setToolServerEnabled,
  type SavedTransport,
  type SecretInput,
  type ToolServerInput,
  type ToolServerState,
  type ToolServerView,
  type ToolServersView,
} from '../ipc';
import { ErrorBanner } from './ErrorBanner';
import { Field } from './Field';

/** An environment variable or header in the form. `saved`: the name as saved, whose value
 *  stays as it is while the value field is left empty. */
interface SecretRow {
  name: string;
  value: string;
  saved: string | null;
}

type Kind = SavedTransport['kind'];

/** The add/edit form; both kinds' fields are kept so that switching kind loses nothing. */
interface Draft {
  id: number | null;
  name: string;
  kind: Kind;
  command: string;
  /** One argument per line. */
  args: string;
  env: SecretRow[];
  cwd: string;
  url: string;
  headers: SecretRow[];
}

const blank: Draft = { id: null, name: '', kind: 'stdio', command: '', args: '', env: [], cwd: '', url: '', headers: [] };

const savedRows = (names: string[]): SecretRow[] => names.map((name) => ({ name, value: '', saved: name }));

function toDraft(server: ToolServerView): Draft {
  const transport = server.transport;
  return transport.kind === 'stdio'
    ? {
        ...blank,
        id: server.id,
        name: server.name,
        kind: 'stdio',
        command: transport.command,
        args: transport.args.join('\n'),
        env: savedRows(transport.env),
        cwd: transport.cwd ?? '',
      }
    : { ...blank, id: server.id, name: server.name, kind: 'http', url: transport.url, headers: savedRows(transport.headers) };
}

/** Rows with a name; a saved one left empty keeps its value (`null`). */
function secretInputs(rows: SecretRow[]): SecretInput[] {
  return rows
    .map((row) => ({ ...row, name: row.name.trim() }))
    .filter((row) => row.name !== '')
    .map((row) => ({ name: row.name, value: row.saved === row.name && row.value === '' ? null : row.value }));
}

function fromDraft(draft: Draft): ToolServerInput {
  const transport: ToolServerInput['transport'] =
    draft.kind === 'stdio'
      ? {
          kind: 'stdio',
          command: draft.command.trim(),
          args: draft.args
            .split('\n')
            .map((arg) => arg.trim())
            .filter((arg) => arg !== ''),
          env: secretInputs(draft.env),
          cwd: draft.cwd.trim() || null,
        }
      : { kind: 'http', url: draft.url.trim(), headers: secretInputs(draft.headers) };
  return { id: draft.id, name: draft.name, transport };
}

/** How a server is reached, in one line: its command line, or its URL. */
function transportSummary(transport: SavedTransport): string {
  if (transport.kind === 'http') {
    return transport.headers.length ? `${transport.url} (headers: ${transport.headers.join(', ')})` : transport.url;
  }
  const line = [transport.command, ...transport.args].join(' ');
  return transport.env.length ? `${line} (environment: ${transport.env.join(', ')})` : line;
}

const stateWords: Record<ToolServerState, string> = {
  off: 'Off',
  starting: 'Starting…',
  ready: 'Ready',
  failed: 'Failed',
};

export function ToolServers() {
  const [view, setView] = useState<ToolServersView | null>(null);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [importJson, setImportJson] = useState('');
  const [notice, setNotice] = useState<string | null>(null);

  // The list, then every change the servers go through while the pane is open.
  useEffect(() => {
    let live = true;
    let heard = false;
    let unlisten: (() => void) | null = null;
    onToolServers((next) => {
      heard = true;
      if (live) setView(next);
    }).then(
      (stop) => (live ? (unlisten = stop) : stop()),
      () => {
        /* Without the event the list shows what each action answers. */
      },
    );
    listToolServers().then(
      // An event that came first is newer than this answer.
      (found) => live && !heard && setView(found),
      (e: unknown) => live && setError(`Could not list the tool servers: ${errorMessage(e)}`),
    );
    return () => {
      live = false;
      unlisten?.();
    };
  }, []);

  /** Runs a command; its error shows in this section. Resolves to its answer, null on failure. */
  const act = async (what: string, command: () => Promise<ToolServersView>): Promise<ToolServersView | null> => {
    setBusy(what);
    setError(null);
    try {
      const next = await command();
      setView(next);
      return next;
    } catch (e) {
      setError(errorMessage(e));
      return null;
    } finally {
      setBusy(null);
    }
  };

  const save = async () => {
    if (!draft) return;
    if (await act('save', () => saveToolServer(fromDraft(draft)))) setDraft(null);
  };

  const importServers = async () => {
    const before = view?.servers.length ?? 0;
    const next = await act('import', () => importToolServers(importJson));
    if (!next) return;
    setImportJson('');
    const added = next.servers.length - before;
    setNotice(`Added ${added} ${added === 1 ? 'server' : 'servers'}, switched off: check what each one runs, then turn it on to start it.`);
  };

  const servers = view?.servers ?? [];
  return (
    <section data-testid="tool-servers">
      <h4>Tool servers</h4>
      <p className="field-hint muted">
        MCP servers whose tools the model may call in a chat; you allow each call, or a tool always. Environment values and headers are kept
        in {view?.secret_store ?? 'the system keychain'}, never in the app's database.
      </p>
      {error && <ErrorBanner message={error} onDismiss={() => setError(null)} />}
      {servers.length === 0 && view && <p className="muted small">No tool servers yet.</p>}
      <ul className="provider-list tool-server-list">
        {servers.map((server) => (
          <ServerItem
            key={server.id}
            server={server}
            busy={busy !== null}
            act={act}
            onEdit={() => setDraft(toDraft(server))}
            editing={draft?.id === server.id}
          />
        ))}
      </ul>
      {draft ? (
        <ServerForm draft={draft} busy={busy} onChange={setDraft} onSave={() => void save()} onCancel={() => setDraft(null)} />
      ) : (
        <button type="button" data-testid="tool-server-add" onClick={() => setDraft(blank)}>
          Add tool server
        </button>
      )}
      <div className="tool-import">
        <Field
          label="Paste an mcpServers JSON"
          hint="As Claude Desktop, Cursor, LM Studio or VS Code write it. Imported servers start switched off."
        >
          <textarea
            data-testid="tool-import-json"
            rows={4}
            spellCheck={false}
            placeholder={
              '{ "mcpServers": { "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"] } } }'
            }
            value={importJson}
            onChange={(event) => setImportJson(event.target.value)}
          />
        </Field>
        <button
          type="button"
          data-testid="tool-import"
          disabled={busy !== null || importJson.trim() === ''}
          onClick={() => void importServers()}
        >
          {busy === 'import' ? 'Importing…' : 'Import'}
        </button>
        {notice && (
          <p className="muted small" role="status" data-testid="tool-import-notice">
            {notice}
          </p>
        )}
      </div>
    </section>
  );
}

interface ItemProps {
  server: ToolServerView;
  busy: boolean;
  editing: boolean;
  act: (what: string, command: () => Promise<ToolServersView>) => Promise<ToolServersView | null>;
  onEdit: () => void;
}

/** One server: its switch, state, what went wrong, its actions and its tools. */
function ServerItem({ server, busy, editing, act, onEdit }: ItemProps) {
  const failed = server.state === 'failed';
  const stderr = server.stderr_tail.length > 0 && (
    <pre className="tool-server-stderr" data-testid="tool-server-stderr">
      {server.stderr_tail.join('\n')}
    </pre>
  );
  return (
    <li className="provider-item tool-server-item" data-testid="tool-server-item" data-id={server.id} data-state={server.state}>
      <div className="tool-server-head">
        <input
          type="checkbox"
          role="switch"
          data-testid="tool-server-switch"
          aria-label={`${server.name}: ${server.enabled ? 'on' : 'off'}`}
          title={
            server.enabled
              ? 'Turn it off: it stops, and chats no longer see its tools'
              : 'Turn it on: it starts, and chats may call its tools'
          }
          checked={server.enabled}
          disabled={busy}
          onChange={(event) => void act('switch', () => setToolServerEnabled(server.id, event.target.checked))}
        />
        <strong>{server.name}</strong>
        <span className={`tool-state tool-state-${server.state}`} data-testid="tool-server-state">
          {stateWords[server.state]}
        </span>
      </div>
      <code className="tool-server-transport">{transportSummary(server.transport)}</code>
      {failed && server.error && (
        <p className="tool-server-error" data-testid="tool-server-error">
          {server.error}
        </p>
      )}
      {stderr &&
        (failed ? (
          stderr
        ) : (
          <details>
            <summary className="muted small">Its last output on stderr</summary>
            {stderr}
          </details>
        ))}
      <div className="provider-actions">
        <button
          type="button"
          className="small"
          data-testid="tool-server-restart"
          disabled={busy || !server.enabled}
          title={server.enabled ? 'Stop it and start it again' : 'Turn it on to start it'}
          onClick={() => void act('restart', () => restartToolServer(server.id))}
        >
          Restart
        </button>
        <button type="button" className="ghost small" data-testid="tool-server-edit" disabled={busy || editing} onClick={onEdit}>
          Edit
        </button>
        <button
          type="button"
          className="ghost small"
          data-testid="tool-server-remove"
          disabled={busy}
          onClick={() => void act('remove', () => removeToolServer(server.id))}
        >
          Remove
        </button>
      </div>
      {server.tools.length === 0 ? (
        <p className="muted small">
          {server.state === 'ready'
            ? 'It offers no tools.'
            : server.enabled
              ? 'Its tools show once it is ready.'
              : 'Turn it on to see its tools.'}
        </p>
      ) : (
        <ul className="tool-list">
          {server.tools.map((tool) => (
            <li key={tool.name} className="tool-item" data-testid="tool-item" data-name={tool.name}>
              <input
                type="checkbox"
                role="switch"
                data-testid="tool-switch"
                aria-label={`Offer ${tool.name} to chats`}
                checked={tool.enabled}
                disabled={busy}
                onChange={(event) => void act('tool', () => setToolEnabled(server.id, tool.name, event.target.checked))}
              />
              <div className="tool-item-text">
                <code>{tool.name}</code>
                {tool.always_allowed && (
                  <span className="tool-always">
                    {' '}
                    runs without asking{' '}
                    <button
                      type="button"
                      className="ghost small"
                      data-testid="tool-always-revoke"
                      disabled={busy}
                      title="Ask before each call of this tool again"
                      onClick={() => void act('revoke', () => setToolAlwaysAllowed(server.id, tool.name, false))}
                    >
                      Ask each time
                    </button>
                  </span>
                )}
                {tool.description && <p className="muted small tool-description">{tool.description}</p>}
              </div>
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

interface FormProps {
  draft: Draft;
  busy: string | null;
  onChange: (draft: Draft) => void;
  onSave: () => void;
  onCancel: () => void;
}

function ServerForm({ draft, busy, onChange, onSave, onCancel }: FormProps) {
  const update = (change: Partial<Draft>) => onChange({ ...draft, ...change });
  // Enter in a field saves the server, not the whole settings pane.
  const onEnter = (event: KeyboardEvent) => {
    if (event.key === 'Enter') {
      event.preventDefault();
      onSave();
    }
  };
  return (
    <div className="provider-form tool-server-form" data-testid="tool-server-form">
      <div className="field-grid">
        <Field label="Name">
          <input
            type="text"
            data-testid="tool-server-name"
            placeholder="files"
            value={draft.name}
            onKeyDown={onEnter}
            onChange={(event) => update({ name: event.target.value })}
          />
        </Field>
        <Field label="Kind">
          <select data-testid="tool-server-kind" value={draft.kind} onChange={(event) => update({ kind: event.target.value as Kind })}>
            <option value="stdio">A command on this computer (stdio)</option>
            <option value="http">A URL (streamable HTTP)</option>
          </select>
        </Field>
      </div>
      {draft.kind === 'stdio' ? (
        <>
          <Field label="Command" hint="Such as npx, uvx or a full path.">
            <input
              type="text"
              data-testid="tool-server-command"
              spellCheck={false}
              placeholder="npx"
              value={draft.command}
              onKeyDown={onEnter}
              onChange={(event) => update({ command: event.target.value })}
            />
          </Field>
          <Field label="Arguments" hint="One per line.">
            <textarea
              data-testid="tool-server-args"
              rows={3}
              spellCheck={false}
              placeholder={'-y\n@modelcontextprotocol/server-filesystem\n/Users/me/notes'}
              value={draft.args}
              onChange={(event) => update({ args: event.target.value })}
            />
          </Field>
          <SecretRows
            label="Environment variables"
            noun="variable"
            rows={draft.env}
            onChange={(env) => update({ env })}
            onEnter={onEnter}
          />
          <Field label="Working folder" hint="A full path; empty: the app's own.">
            <input
              type="text"
              data-testid="tool-server-cwd"
              spellCheck={false}
              placeholder="/Users/me/project"
              value={draft.cwd}
              onKeyDown={onEnter}
              onChange={(event) => update({ cwd: event.target.value })}
            />
          </Field>
        </>
      ) : (
        <>
          <Field label="URL" hint="The server's MCP endpoint, such as http://127.0.0.1:8931/mcp">
            <input
              type="url"
              data-testid="tool-server-url"
              spellCheck={false}
              placeholder="http://127.0.0.1:8931/mcp"
              value={draft.url}
              onKeyDown={onEnter}
              onChange={(event) => update({ url: event.target.value })}
            />
          </Field>
          <SecretRows label="Headers" noun="header" rows={draft.headers} onChange={(headers) => update({ headers })} onEnter={onEnter} />
        </>
      )}
      <div className="edit-actions">
        <button type="button" className="ghost" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" className="primary" data-testid="tool-server-save" disabled={busy !== null} onClick={onSave}>
          {busy === 'save' ? 'Saving…' : draft.id === null ? 'Add server' : 'Save server'}
        </button>
      </div>
    </div>
  );
}

interface RowsProps {
  label: string;
  noun: string;
  rows: SecretRow[];
  onChange: (rows: SecretRow[]) => void;
  onEnter: (event: KeyboardEvent) => void;
}

/** Names and values of environment variables or headers; a saved value is never shown. */
function SecretRows({ label, noun, rows, onChange, onEnter }: RowsProps) {
  const set = (index: number, change: Partial<SecretRow>) => onChange(rows.map((row, i) => (i === index ? { ...row, ...change } : row)));
  return (
    <fieldset className="secret-rows" data-testid="tool-secret-rows">
      <legend className="field-label">{label}</legend>
      {rows.map((row, index) => (
        <div key={index} className="secret-row" data-testid="tool-secret-row">
          <input
            type="text"
            data-testid="tool-secret-name"
            aria-label={`${label}: name`}
            spellCheck={false}
            placeholder="NAME"
            value={row.name}
            onKeyDown={onEnter}
            onChange={(event) => set(index, { name: event.target.value })}
          />
          <input
            type="password"
            autoComplete="off"
            data-testid="tool-secret-value"
            aria-label={`${label}: value of ${row.name || 'this one'}`}
            placeholder={row.saved !== null && row.saved === row.name.trim() ? 'saved — leave empty to keep' : 'value'}
            value={row.value}
            onKeyDown={onEnter}
            onChange={(event) => set(index, { value: event.target.value })}
          />
          <button
            type="button"
            className="ghost small"
            aria-label={`Remove ${row.name || `this ${noun}`}`}
            onClick={() => onChange(rows.filter((_, i) => i !== index))}
          >
            Remove
          </button>
        </div>
      ))}
      <button
        type="button"
        className="small"
        data-testid="tool-secret-add"
        onClick={() => onChange([...rows, { name: '', value: '', saved: null }])}
      >
        Add {noun}
      </button>
    </fieldset>
  );
}
