import { Field } from './Field';

export interface ServerForm {
  server_enabled: boolean;
  server_port: string;
  server_key: string;
  /** Comma-separated, as typed. */
  server_origins: string;
}

interface Props {
  form: ServerForm;
  onChange: (change: Partial<ServerForm>) => void;
}

/** The settings pane's "Local server" section: on/off, port, key, the web pages allowed. */
export function LocalServerFields({ form, onChange }: Props) {
  return (
    <section>
      <h4>Local server</h4>
      <p className="field-hint muted">
        An OpenAI-compatible API on this computer (127.0.0.1) for editors, agents and scripts, on the loaded model. Its requests are not
        saved as chats.
      </p>
      <label className="field checkbox-field">
        <input
          type="checkbox"
          data-testid="setting-server_enabled"
          checked={form.server_enabled}
          onChange={(event) => onChange({ server_enabled: event.target.checked })}
        />
        <span className="field-label">Serve the OpenAI API</span>
      </label>
      <div className="field-grid">
        <Field label="Port" hint={`Base URL: http://127.0.0.1:${form.server_port || '…'}/v1`}>
          <input
            type="number"
            min="1024"
            max="65535"
            step="1"
            data-testid="setting-server_port"
            value={form.server_port}
            onChange={(event) => onChange({ server_port: event.target.value })}
          />
        </Field>
        <Field label="API key" hint="Clients send it as a Bearer token; empty: none asked.">
          <input
            type="password"
            autoComplete="off"
            placeholder="None"
            data-testid="setting-server_key"
            value={form.server_key}
            onChange={(event) => onChange({ server_key: event.target.value })}
          />
        </Field>
        <Field
          label="Allowed web pages"
          hint="Origins whose pages may call the server from a browser (https://chat.example.com), comma-separated; pages on localhost always may, others are refused."
        >
          <input
            type="text"
            placeholder="None"
            data-testid="setting-server_origins"
            value={form.server_origins}
            onChange={(event) => onChange({ server_origins: event.target.value })}
          />
        </Field>
      </div>
    </section>
  );
}
