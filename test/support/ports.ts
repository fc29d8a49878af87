export { freePort } from '../../src/lib/net';
