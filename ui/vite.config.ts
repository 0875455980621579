/**
 * The operator dashboard's build: Preact + Vite, served by `gitops-scaffolder
 * serve` under /ui/ from ui/dist. Build with `vite build ui` from the package
 * root (npm run build:ui). `vite ui` serves it for development, proxying the
 * API to a service on 127.0.0.1:8080.
 */
import { fileURLToPath } from 'node:url';
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/ui/',
  plugins: [preact({ devtoolsInProd: false, reactAliasesEnabled: false })],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Everything as files under /ui/assets/: nothing inlined, so the page's CSP needs no exceptions.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: false,
  },
  server: {
    host: '127.0.0.1',
    proxy: { '/api': 'http://127.0.0.1:8080' },
  },
});
