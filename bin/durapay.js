#!/usr/bin/env node
'use strict';
// In a source checkout the TypeScript sources run directly through tsx; an installed build
// (the Docker image ships dist/ without src/) runs the compiled JavaScript: dist/src/ for the
// gateway, dist/sandbox/ for the simulated upstream the API mounts when the sandbox is enabled.
const path = require('node:path');
const fs = require('node:fs');

const root = path.join(__dirname, '..');
const source = path.join(root, 'src', 'cli', 'index.ts');
if (fs.existsSync(source)) {
  require('tsx/cjs');
  require(source);
} else {
  require(path.join(root, 'dist', 'src', 'cli', 'index.js'));
}
