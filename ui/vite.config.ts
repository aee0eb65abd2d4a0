import { defineConfig } from 'vitest/config';

// Tauri loads ui/dist (see ../tauri.conf.json); the dev server is only for working on the UI.
export default defineConfig({
  clearScreen: false,
  server: { port: 1420, strictPort: true },
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022' },
  test: { environment: 'jsdom' },
});
