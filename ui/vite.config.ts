// The settings UI: vanilla TypeScript, served by the hub at /app/ (docs/ui.md).
// `npm run dev:ui` rebuilds on change; the hub reads ui/dist from disk, so a reload shows it.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: 'ui',
  base: '/app/',
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false },
  test: { include: ['src/**/*.test.ts'], environment: 'node' },
});
