import path from 'node:path';

/** This checkout or installation: above src/platform/ in the sources, dist/src/platform/ once built. */
const above = path.resolve(__dirname, '..', '..');
const ROOT = path.basename(above) === 'dist' ? path.dirname(above) : above;

/** The checkout's (or installation's) root directory. */
export const ROOT_DIR = ROOT;

/** The `durapay` executable of this checkout or installation, for starting child processes. */
export const DURAPAY_BIN = path.join(ROOT, 'bin', 'durapay.js');
