import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The API serves the built console at /console (assets under /console/assets/), so every URL the
// build writes starts with it. `npm run dev -w console` serves it at :5173/console/ with hot reload
// and hands the console's JSON API on to the gateway that `npm start` runs on :8080.
export default defineConfig({
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // antd and the charts make one large chunk; it is served from the same host, compressed.
    chunkSizeWarningLimit: 2500,
  },
  server: {
    proxy: {
      '/console/api': 'http://127.0.0.1:8080',
    },
  },
});
