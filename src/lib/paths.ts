import path from 'node:path';

/** The `durapay` executable of this checkout or installation, for starting child processes. */
export const DURAPAY_BIN = path.join(__dirname, '..', '..', 'bin', 'durapay.js');
