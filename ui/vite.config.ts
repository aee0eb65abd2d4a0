import { defineConfig } from 'vitest/config';

// Tauri loads ui/dist (see ../tauri.conf.json); the dev server is only for working on the UI.
export default defineConfig({
  clearScreen: false,
  server: { port: 1420, strictPort: true },
  // The bundle loads from disk, not a network: one chunk (markdown, KaTeX, highlight.js) is fine.
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', chunkSizeWarningLimit: 1500 },
  test: { environment: 'jsdom', setupFiles: ['src/test/setup.ts'] },
});
