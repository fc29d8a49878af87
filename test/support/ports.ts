export { freePort } from '../../src/platform/net';
