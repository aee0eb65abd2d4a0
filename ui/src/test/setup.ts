// Every UI test talks to the fake backend (tauriMock.ts) instead of Tauri, and starts from an
// empty document. Files set up the backend's answers themselves (fixtures.ts: installBackend).
import { afterEach, vi } from 'vitest';
import { cleanup } from '@testing-library/react';

vi.mock('@tauri-apps/api/core', async () => {
  const mock = await import('./tauriMock');
  return { invoke: mock.invoke, Channel: mock.Channel };
});
vi.mock('@tauri-apps/api/event', async () => ({ listen: (await import('./tauriMock')).listen }));
vi.mock('@tauri-apps/api/webview', async () => ({ getCurrentWebview: (await import('./tauriMock')).getCurrentWebview }));

afterEach(cleanup);
