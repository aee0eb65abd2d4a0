import { beforeEach, describe, expect, it } from 'vitest';
import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { installBackend, settings } from '../test/fixtures';
import { renderApp } from '../test/renderApp';
import { callsOf, commands, emit, invoke, lastArgs } from '../test/tauriMock';
import type { ToolServerView, ToolServersView } from '../ipc';
import { ToolServers } from './ToolServers';

const files: ToolServerView = {
  id: 1,
  name: 'files',
  enabled: true,
  transport: { kind: 'stdio', command: 'npx', args: ['-y', 'server-filesystem', '/tmp'], env: ['API_KEY'], cwd: null },
  state: 'ready',
  error: null,
  stderr_tail: [],
  tools: [
    { name: 'read_file', description: 'Reads a file.', enabled: true, always_allowed: true },
    { name: 'write_file', description: null, enabled: false, always_allowed: false },
  ],
};

const broken: ToolServerView = {
  id: 2,
  name: 'search',
  enabled: true,
  transport: { kind: 'http', url: 'http://127.0.0.1:8931/mcp', headers: ['Authorization'] },
  state: 'failed',
  error: 'The server closed its connection before answering initialize.',
  stderr_tail: ['Traceback (most recent call last):', '<img src=x onerror="window.__pwned=1"> KeyError: ****'],
  tools: [],
};

const starting: ToolServerView = { ...files, id: 3, name: 'git', state: 'starting', tools: [] };
const off: ToolServerView = { ...files, id: 4, name: 'notes', enabled: false, state: 'off', tools: [] };

function installServers(servers: ToolServerView[]) {
  const view = (): ToolServersView => ({ servers, secret_store: 'the test keyring' });
  commands.set('list_tool_servers', view);
  for (const command of [
    'save_tool_server',
    'remove_tool_server',
    'set_tool_server_enabled',
    'restart_tool_server',
    'set_tool_enabled',
    'set_tool_always_allowed',
  ] as const) {
    commands.set(command, view);
  }
  return view;
}

const item = (id: number) => screen.getAllByTestId('tool-server-item').find((li) => li.dataset.id === String(id))!;

beforeEach(() => {
  installBackend();
  invoke.mockClear();
});

describe('Settings › Tools', () => {
  it('shows each server with its state, its failure and stderr as text, and its tools', async () => {
    installServers([files, broken, starting, off]);
    render(<ToolServers />);
    await waitFor(() => expect(screen.getAllByTestId('tool-server-item')).toHaveLength(4));
    const states = screen
      .getAllByTestId('tool-server-item')
      .map((li) => [li.dataset.state, within(li).getByTestId('tool-server-state').textContent]);
    expect(states).toEqual([
      ['ready', 'Ready'],
      ['failed', 'Failed'],
      ['starting', 'Starting…'],
      ['off', 'Off'],
    ]);
    expect(item(1).textContent).toContain('npx -y server-filesystem /tmp (environment: API_KEY)');
    expect(item(2).textContent).toContain('http://127.0.0.1:8931/mcp (headers: Authorization)');
    expect(within(item(2)).getByTestId('tool-server-error').textContent).toContain('closed its connection');
    const stderr = within(item(2)).getByTestId('tool-server-stderr');
    expect(stderr.tagName).toBe('PRE');
    expect(stderr.textContent).toBe(broken.stderr_tail.join('\n'));
    expect(item(2).querySelector('img, [onerror]')).toBeNull();
    // Restart only for a server that is on.
    expect((within(item(4)).getByTestId('tool-server-restart') as HTMLButtonElement).disabled).toBe(true);
    expect(item(4).textContent).toContain('Turn it on to see its tools.');

    const tools = within(item(1)).getAllByTestId('tool-item');
    expect(tools.map((t) => [t.dataset.name, (within(t).getByTestId('tool-switch') as HTMLInputElement).checked])).toEqual([
      ['read_file', true],
      ['write_file', false],
    ]);
    expect(tools[0]!.textContent).toContain('Reads a file.');
    expect(tools[0]!.textContent).toContain('runs without asking');
    expect(within(tools[1]!).queryByTestId('tool-always-revoke')).toBeNull();
    expect(screen.getByTestId('tool-servers').textContent).toContain('the test keyring');
  });

  it('sends each switch, revoke, restart and remove for the right server and tool', async () => {
    installServers([files, off]);
    render(<ToolServers />);
    await waitFor(() => expect(screen.getAllByTestId('tool-server-item')).toHaveLength(2));
    const steps: [() => HTMLElement, string, Record<string, unknown>][] = [
      [() => within(item(4)).getByTestId('tool-server-switch'), 'set_tool_server_enabled', { id: 4, enabled: true }],
      [() => within(item(1)).getByTestId('tool-server-switch'), 'set_tool_server_enabled', { id: 1, enabled: false }],
      [() => within(item(1)).getAllByTestId('tool-switch')[1]!, 'set_tool_enabled', { id: 1, tool: 'write_file', enabled: true }],
      [() => within(item(1)).getByTestId('tool-always-revoke'), 'set_tool_always_allowed', { id: 1, tool: 'read_file', always: false }],
      [() => within(item(1)).getByTestId('tool-server-restart'), 'restart_tool_server', { id: 1 }],
      [() => within(item(4)).getByTestId('tool-server-remove'), 'remove_tool_server', { id: 4 }],
    ];
    for (const [target, command, args] of steps) {
      await waitFor(() => expect((target() as HTMLButtonElement).disabled).toBe(false));
      fireEvent.click(target());
      await waitFor(() => expect(lastArgs(command as 'restart_tool_server')).toEqual(args));
    }
  });

  it('follows the servers live while the pane is open', async () => {
    installServers([{ ...files, state: 'starting', tools: [] }]);
    render(<ToolServers />);
    await waitFor(() => expect(item(1).dataset.state).toBe('starting'));
    act(() => emit('tool-servers', { servers: [{ ...broken, id: 1, name: 'files' }], secret_store: 'the test keyring' }));
    expect(item(1).dataset.state).toBe('failed');
    expect(within(item(1)).getByTestId('tool-server-stderr').textContent).toContain('Traceback');
    act(() => emit('tool-servers', { servers: [files], secret_store: 'the test keyring' }));
    expect(item(1).dataset.state).toBe('ready');
  });

  it('edits a server: a saved variable left empty keeps its value (null), a typed one is sent', async () => {
    installServers([files]);
    render(<ToolServers />);
    fireEvent.click(await screen.findByTestId('tool-server-edit'));
    const form = screen.getByTestId('tool-server-form');
    expect((within(form).getByTestId('tool-server-kind') as HTMLSelectElement).value).toBe('stdio');
    expect((within(form).getByTestId('tool-server-args') as HTMLTextAreaElement).value).toBe('-y\nserver-filesystem\n/tmp');
    const saved = within(form).getByTestId('tool-secret-value') as HTMLInputElement;
    expect(saved.value).toBe('');
    expect(saved.placeholder).toBe('saved — leave empty to keep');
    fireEvent.click(within(form).getByTestId('tool-secret-add'));
    fireEvent.change(within(form).getAllByTestId('tool-secret-name')[1]!, { target: { value: ' DEBUG ' } });
    fireEvent.change(within(form).getAllByTestId('tool-secret-value')[1]!, { target: { value: '1' } });
    fireEvent.change(within(form).getByTestId('tool-server-args'), { target: { value: '-y\n\nserver-filesystem\n/tmp/a b\n' } });
    fireEvent.click(within(form).getByTestId('tool-server-save'));
    await waitFor(() =>
      expect(lastArgs('save_tool_server')).toEqual({
        server: {
          id: 1,
          name: 'files',
          transport: {
            kind: 'stdio',
            command: 'npx',
            args: ['-y', 'server-filesystem', '/tmp/a b'],
            env: [
              { name: 'API_KEY', value: null },
              { name: 'DEBUG', value: '1' },
            ],
            cwd: null,
          },
        },
      }),
    );
    await waitFor(() => expect(screen.queryByTestId('tool-server-form')).toBeNull());
  });

  it('adds an HTTP server with a header, and shows the error the backend gives', async () => {
    installServers([]);
    commands.set('save_tool_server', () => {
      throw 'Give the tool server a name, such as "files" or "search".';
    });
    render(<ToolServers />);
    fireEvent.click(await screen.findByTestId('tool-server-add'));
    const form = screen.getByTestId('tool-server-form');
    fireEvent.change(within(form).getByTestId('tool-server-kind'), { target: { value: 'http' } });
    fireEvent.change(within(form).getByTestId('tool-server-url'), { target: { value: ' http://127.0.0.1:8931/mcp ' } });
    fireEvent.click(within(form).getByTestId('tool-secret-add'));
    fireEvent.change(within(form).getByTestId('tool-secret-name'), { target: { value: 'Authorization' } });
    const value = within(form).getByTestId('tool-secret-value') as HTMLInputElement;
    expect(value.placeholder).toBe('value');
    fireEvent.change(value, { target: { value: 'Bearer s3cret' } });
    fireEvent.click(within(form).getByTestId('tool-server-save'));
    expect((await screen.findByRole('alert')).textContent).toContain('Give the tool server a name');
    expect(lastArgs('save_tool_server')).toEqual({
      server: {
        id: null,
        name: '',
        transport: { kind: 'http', url: 'http://127.0.0.1:8931/mcp', headers: [{ name: 'Authorization', value: 'Bearer s3cret' }] },
      },
    });
    // The form stays, with what was typed.
    expect(screen.getByTestId('tool-server-form')).toBeTruthy();
  });

  it('imports a pasted mcpServers JSON and says the servers are off', async () => {
    const servers: ToolServerView[] = [];
    installServers(servers);
    commands.set('import_tool_servers', () => {
      servers.push(off, { ...off, id: 5, name: 'notes 2' });
      return { servers, secret_store: 'the test keyring' };
    });
    render(<ToolServers />);
    const json = '{"mcpServers":{"notes":{"command":"uvx","args":["notes"]}}}';
    fireEvent.change(await screen.findByTestId('tool-import-json'), { target: { value: json } });
    fireEvent.click(screen.getByTestId('tool-import'));
    expect((await screen.findByTestId('tool-import-notice')).textContent).toContain('Added 2 servers, switched off');
    expect(callsOf('import_tool_servers')).toEqual([{ json }]);
    expect((screen.getByTestId('tool-import-json') as HTMLTextAreaElement).value).toBe('');
    expect(screen.getAllByTestId('tool-server-item').map((li) => li.dataset.state)).toEqual(['off', 'off']);
  });
});

describe('tool settings saved with the others', () => {
  it('saves tool rounds and the timeout, and turns away what is not a whole number', async () => {
    commands.set('save_settings', (args) => args.settings);
    await renderApp();
    fireEvent.click(screen.getByTestId('settings-button'));
    const rounds = (await screen.findByTestId('setting-tool_rounds')) as HTMLInputElement;
    expect(rounds.value).toBe('8');
    expect((screen.getByTestId('setting-tool_timeout_s') as HTMLInputElement).value).toBe('60');
    expect(await screen.findByTestId('tool-servers')).toBeTruthy();
    fireEvent.change(rounds, { target: { value: '2.5' } });
    fireEvent.click(screen.getByTestId('settings-save'));
    const pane = screen.getByTestId('settings-pane');
    expect((await within(pane).findByTestId('error-banner')).textContent).toContain('Tool rounds per reply must be a whole number');
    expect(callsOf('save_settings')).toHaveLength(0);
    fireEvent.change(rounds, { target: { value: '3' } });
    fireEvent.change(screen.getByTestId('setting-tool_timeout_s'), { target: { value: '120' } });
    fireEvent.click(screen.getByTestId('settings-save'));
    await waitFor(() => expect(lastArgs('save_settings')).toEqual({ settings: { ...settings, tool_rounds: 3, tool_timeout_s: 120 } }));
  });

  it('can require a tool call of every reply', async () => {
    commands.set('save_settings', (args) => args.settings);
    await renderApp();
    fireEvent.click(screen.getByTestId('settings-button'));
    const toolUse = (await screen.findByTestId('setting-tool_use')) as HTMLSelectElement;
    expect(toolUse.value).toBe('auto');
    fireEvent.change(toolUse, { target: { value: 'required' } });
    fireEvent.click(screen.getByTestId('settings-save'));
    await waitFor(() => expect(lastArgs('save_settings')).toEqual({ settings: { ...settings, tool_use: 'required' } }));
  });
});
