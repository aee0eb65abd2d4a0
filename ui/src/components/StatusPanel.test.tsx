import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { StatusPanel } from './StatusPanel';
import { diagnostics, runtimeInfo, type RuntimeInfo } from '../ipc';

vi.mock('../ipc', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../ipc')>()),
  runtimeInfo: vi.fn(),
  diagnostics: vi.fn(),
}));

const info: RuntimeInfo = {
  app_version: '0.1.0',
  mlx: {
    version: '0.32.2',
    built_against: '0.32.2',
    backend: 'cpu',
    device: 'cpu',
    library: '/opt/mlx/lib/libmlx.so',
    metallib: null,
  },
  paths: { data_dir: '/d', models_dir: '/d/models', cache_dir: '/c' },
  default_model: { name: 'SmolLM2-135M-Instruct', path: '/d/models/smol.gguf', present: false },
  log_file: '/d/logs/confab.log',
};

afterEach(() => {
  cleanup();
  vi.mocked(runtimeInfo).mockReset();
});

describe('StatusPanel', () => {
  it('shows the runtime once it is known', async () => {
    vi.mocked(runtimeInfo).mockResolvedValue(info);
    render(<StatusPanel />);
    expect(screen.getByText(/Checking the runtime/)).toBeTruthy();
    expect((await screen.findByTestId('mlx-version')).textContent).toBe('0.32.2');
    expect(screen.getByTestId('app-version').textContent).toBe('0.1.0');
    expect(screen.getByTestId('engine-backend').textContent).toBe('cpu (runs on the cpu)');
    expect(screen.getByText('SmolLM2-135M-Instruct', { exact: false })).toBeTruthy();
    expect(screen.getByText('missing')).toBeTruthy();
    // Versions, not the folders the app happens to use.
    expect(screen.queryByText('/d/models/smol.gguf')).toBeNull();
  });

  it('shows the error and retries', async () => {
    vi.mocked(runtimeInfo).mockRejectedValueOnce(new Error('MLX call `mlx_version` failed'));
    render(<StatusPanel />);
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('MLX call `mlx_version` failed');

    vi.mocked(runtimeInfo).mockResolvedValueOnce({
      ...info,
      default_model: { ...info.default_model, present: true },
    });
    fireEvent.click(screen.getByRole('button', { name: 'Try again' }));
    expect(await screen.findByText('present')).toBeTruthy();
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('shows the log file and copies the diagnostics', async () => {
    vi.mocked(runtimeInfo).mockResolvedValue(info);
    vi.mocked(diagnostics).mockResolvedValue('Confab 0.1.0 on linux x86_64\n');
    const writeText = vi.fn().mockResolvedValue(undefined);
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    render(<StatusPanel />);
    expect((await screen.findByTestId('log-file')).textContent).toBe('/d/logs/confab.log');
    fireEvent.click(screen.getByTestId('copy-diagnostics'));
    expect(await screen.findByText('Copied')).toBeTruthy();
    expect(writeText).toHaveBeenCalledWith('Confab 0.1.0 on linux x86_64\n');
  });
});
