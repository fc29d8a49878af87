/**
 * The sandbox upstream: a simulated payment channel, the other end of the gateway's `sandbox`
 * adapter. It is a tool beside the gateway, not part of it: its own tables and migrations, its
 * own start command (`npm run sandbox`, see ./main.ts). The gateway reaches it at one place only,
 * its development hook (src/sandbox-hook.ts), which mounts it at /sandbox when it is enabled.
 */
export { createSandboxRouter, type SandboxDeps } from './simulator';
export { migrateSandbox, SANDBOX_MIGRATIONS } from './migrations';
export { serveSandbox, type SandboxServer, type SandboxServerOptions } from './server';
