import { builtinModules } from 'node:module';
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import boundaries from 'eslint-plugin-boundaries';
import reactHooks from 'eslint-plugin-react-hooks';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

// What workflow code may not import, wherever it sits (its module's folder or legacy/ below it).
const workflowForbiddenPaths = [
  ...nodeBuiltins.map((name) => ({ name, message: 'Workflows must not use Node built-ins.' })),
  { name: 'sequelize', message: 'Workflows must not touch the database; use an activity.' },
  { name: 'pg', message: 'Workflows must not touch the database; use an activity.' },
  { name: 'winston', message: 'Workflows log through log from @temporalio/workflow.' },
];
const workflowForbiddenPatterns = [
  {
    regex: '(^|/)platform/(?!workflow/|errors$)',
    allowTypeImports: true,
    message: "Workflows use only the platform's workflow helpers (types may be imported).",
  },
  {
    regex: '(^|/)(channels|worker|api|cli)(/|$)',
    allowTypeImports: true,
    message: 'Workflows call channels and the database through activities (types may be imported).',
  },
];

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'coverage/',
      'node_modules/',
      '.durapay/',
      'bench/results/',
      'fuzz/results/',
      'chaos/results/',
      'test-artifacts/',
      'console/dist/',
      'console/.dist-*',
      'console/src/api/generated/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-console': 'error',
    },
  },
  {
    // The architecture (docs/architecture.md, STYLE.md): what each part of src/ may import.
    // A module is reached by other parts only through its index.ts, and by other modules also
    // through its workflow-safe messages.ts and rules.ts; the platform imports no module.
    // Activities are composed in src/activities from each module's own; no module imports the
    // composition or the worker that serves it (each names its own activities and deps).
    files: ['src/**/*.ts', 'sandbox/**/*.ts'],
    plugins: { boundaries },
    settings: {
      'import/resolver': { node: { extensions: ['.ts', '.tsx', '.js'] } },
      'boundaries/include': ['src/**/*.ts', 'sandbox/**/*.ts', 'console/**/*.{ts,tsx}'],
      'boundaries/elements': [
        // Matched on the whole path: src/channels/sandbox (the adapter) is not the upstream.
        { type: 'sandbox', pattern: 'sandbox/**', partialMatch: false },
        // The operator console's app, which no part of the gateway imports (see below).
        { type: 'console', pattern: 'console/**', partialMatch: false },
        { type: 'platform', pattern: 'src/platform' },
        { type: 'module', pattern: 'src/modules/*', capture: ['module'] },
        { type: 'channels', pattern: 'src/channels' },
        { type: 'api', pattern: 'src/api' },
        { type: 'workflows', pattern: 'src/workflows' },
        { type: 'activities', pattern: 'src/activities' },
        { type: 'worker', pattern: 'src/worker' },
        { type: 'diagnostics', pattern: 'src/diagnostics' },
        { type: 'cli', pattern: 'src/cli' },
        { type: 'sdk', pattern: 'src/sdk' },
        { type: 'sandbox-hook', pattern: 'src/sandbox-hook' },
        // The whole configuration: the platform's core settings and each channel's own.
        { type: 'config', pattern: 'src/config' },
      ],
    },
    rules: {
      'boundaries/dependencies': [
        'error',
        {
          default: 'disallow',
          policies: [
            { from: { element: { type: 'platform' } }, allow: { to: { element: { type: 'platform' } } } },
            {
              // The configuration composes the platform's core settings and the channels' own.
              from: { element: { type: 'config' } },
              allow: { to: { element: { types: ['platform', 'channels'] } } },
            },
            {
              from: { element: { type: 'channels' } },
              allow: [
                { to: { element: { types: ['channels', 'platform'] } } },
                { to: { element: { type: 'module' } }, dependency: { kind: 'type' } },
              ],
            },
            {
              from: { element: { type: 'module' } },
              allow: [
                { to: { element: { types: ['platform', 'channels'] } } },
                {
                  to: {
                    element: { type: 'module', fileInternalPath: ['index.ts', 'messages.ts', 'rules.ts'] },
                  },
                },
                // A workflow starting another module's workflow as a child names its type.
                {
                  to: { element: { type: 'module', fileInternalPath: 'workflow.ts' } },
                  dependency: { kind: 'type' },
                },
              ],
            },
            {
              // Refunds depend on orders, never the reverse: orders decides and reserves a refund
              // and starts the workflow that follows it, naming only that workflow's type.
              from: { element: { type: 'module', captured: { module: 'orders' } } },
              disallow: { to: { element: { type: 'module', captured: { module: 'refunds' } } } },
              message:
                "Refunds depend on orders, never the reverse (only the refund workflow's types may be named).",
            },
            {
              // The types orders names to start the refund workflow as its child.
              from: { element: { type: 'module', captured: { module: 'orders' } } },
              allow: {
                to: {
                  element: {
                    type: 'module',
                    captured: { module: 'refunds' },
                    fileInternalPath: ['workflow.ts', 'messages.ts'],
                  },
                },
                dependency: { kind: 'type' },
              },
            },
            {
              // Refunds reach orders through its index.ts; their workflow-safe files (a workflow
              // cannot load the index) through its messages.ts only.
              from: { element: { type: 'module', captured: { module: 'refunds' } } },
              disallow: {
                to: {
                  element: { type: 'module', captured: { module: 'orders' }, fileInternalPath: '!index.ts' },
                },
              },
              message: 'Refunds reach orders through its index.ts (workflow-safe files: its messages.ts).',
            },
            {
              from: {
                element: {
                  type: 'module',
                  captured: { module: 'refunds' },
                  fileInternalPath: ['workflow.ts', 'messages.ts'],
                },
              },
              allow: {
                to: {
                  element: {
                    type: 'module',
                    captured: { module: 'orders' },
                    fileInternalPath: 'messages.ts',
                  },
                },
              },
            },
            {
              from: { element: { type: 'api' } },
              allow: [
                { to: { element: { types: ['platform', 'channels', 'sandbox-hook', 'config'] } } },
                { to: { element: { type: 'module', fileInternalPath: 'index.ts' } } },
              ],
            },
            {
              from: { element: { type: 'workflows' } },
              allow: { to: { element: { type: 'module', fileInternalPath: 'workflow.ts' } } },
            },
            {
              // The composition root of activities: every module's through its index.ts.
              from: { element: { type: 'activities' } },
              allow: [
                { to: { element: { types: ['platform', 'channels', 'diagnostics', 'config'] } } },
                { to: { element: { type: 'module', fileInternalPath: 'index.ts' } } },
              ],
            },
            {
              // The worker wires the composed activities and the workflows; it builds no activity.
              from: { element: { type: 'worker' } },
              allow: [
                {
                  to: { element: { types: ['platform', 'channels', 'diagnostics', 'activities', 'config'] } },
                },
                { to: { element: { type: 'module', fileInternalPath: 'index.ts' } } },
              ],
            },
            {
              from: { element: { type: 'diagnostics' } },
              allow: { to: { element: { types: ['platform', 'workflows'] } } },
            },
            {
              from: { element: { type: 'cli' } },
              allow: {
                to: {
                  element: {
                    types: [
                      'platform',
                      'channels',
                      'api',
                      'worker',
                      'diagnostics',
                      'sandbox-hook',
                      'workflows',
                      'sdk',
                      'config',
                    ],
                  },
                },
              },
            },
            {
              // A module's index, and its workflow-safe messages (ids, patch markers: durapay versions).
              from: { element: { type: 'cli' } },
              allow: { to: { element: { type: 'module', fileInternalPath: ['index.ts', 'messages.ts'] } } },
            },
            {
              // The SDK's channel types (account fields, payee types) are derived from the registry's
              // declarations: types only, so the SDK loads no channel.
              from: { element: { type: 'sdk' } },
              allow: [
                { to: { element: { type: 'platform' } } },
                { to: { element: { type: 'channels' } }, dependency: { kind: 'type' } },
              ],
            },
            {
              from: { element: { type: 'sandbox-hook' } },
              allow: { to: { element: { types: ['sandbox', 'platform', 'channels', 'config'] } } },
            },
            {
              // The simulated upstream speaks the sandbox adapter's wire and uses platform helpers.
              from: { element: { type: 'sandbox' } },
              allow: [
                { to: { element: { types: ['sandbox', 'platform', 'channels'] } } },
                { to: { element: { type: 'module', fileInternalPath: 'rules.ts' } } },
              ],
            },
          ],
        },
      ],
    },
  },
  {
    // Workflow code is replayed and must be deterministic: no I/O, no Node built-ins, no
    // database, logger or channel. Workflow files import @temporalio/workflow, the platform's
    // workflow helpers, modules' messages and rules, and only types of anything else.
    files: [
      'src/workflows/**/*.ts',
      'src/modules/*/workflow.ts',
      'src/modules/orders/order-actor*.ts',
      'src/modules/orders/legacy/*.ts',
      'src/modules/orders/refund-book.ts',
      'src/modules/orders/order-calls.ts',
      'src/modules/*/messages.ts',
      'src/modules/*/rules.ts',
      'src/platform/workflow/**/*.ts',
      'src/diagnostics/*-workflow.ts',
      'src/diagnostics/messages.ts',
      'src/diagnostics/workflows.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: workflowForbiddenPaths,
          patterns: [
            ...workflowForbiddenPatterns,
            {
              regex:
                '(^|/)(activities|repository|service|routes|model|view|index)$|^\\.\\.?$|^\\.\\./(?!workflows$)[a-z-]+$',
              allowTypeImports: true,
              message: "Workflows import a module's messages and rules only (types may be imported).",
            },
          ],
        },
      ],
    },
  },
  {
    // The order workflow's older code paths, kept for replay (src/modules/orders/legacy/), are
    // workflow code one folder down: they reach their module's rules, messages and actor as ../x.
    files: ['src/modules/orders/legacy/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: workflowForbiddenPaths,
          patterns: [
            ...workflowForbiddenPatterns,
            {
              regex: '(^|/)(activities|repository|service|routes|model|view|index)$',
              allowTypeImports: true,
              message: "Workflows import a module's messages and rules only (types may be imported).",
            },
          ],
        },
      ],
    },
  },
  {
    // The operator console (console/) is a browser app of its own, built by Vite and served by the
    // API: it talks to the gateway only over /console/api, so it imports nothing from the
    // gateway's code, and the gateway nothing from it.
    files: ['console/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { boundaries, 'react-hooks': reactHooks },
    settings: {
      'import/resolver': { node: { extensions: ['.ts', '.tsx', '.js'] } },
      'boundaries/include': ['**/*.{ts,tsx,js,mjs}'],
      'boundaries/elements': [
        { type: 'console', pattern: 'console/**', partialMatch: false },
        { type: 'gateway', pattern: '**', partialMatch: false },
      ],
    },
    rules: {
      'boundaries/dependencies': [
        'error',
        {
          default: 'disallow',
          policies: [
            { from: { element: { type: 'console' } }, allow: { to: { element: { type: 'console' } } } },
          ],
          message:
            'The console reaches the gateway only through its JSON API (/console/api), never its code.',
        },
      ],
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
    },
  },
  {
    files: [
      'src/cli/**/*.ts',
      'test/**/*.ts',
      'bench/**/*.ts',
      'fuzz/**/*.ts',
      'chaos/**/*.ts',
      'soak/**/*.ts',
      'bin/**/*.js',
    ],
    rules: { 'no-console': 'off' },
  },
  {
    // CommonJS: the CLI's entry, the tools' configs, and what jest loads untransformed.
    files: ['bin/**/*.js', '*.js', 'test/support/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
