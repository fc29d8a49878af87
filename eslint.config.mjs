import { builtinModules } from 'node:module';
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

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
    // Workflow code is replayed and must be deterministic: no I/O, no Node built-ins, no
    // database, logger or channel; only @temporalio/workflow, definitions and activity types.
    files: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...nodeBuiltins.map((name) => ({ name, message: 'Workflows must not use Node built-ins.' })),
            { name: 'sequelize', message: 'Workflows must not touch the database; use an activity.' },
            { name: 'pg', message: 'Workflows must not touch the database; use an activity.' },
            { name: 'winston', message: 'Workflows log through log from @temporalio/workflow.' },
          ],
          patterns: [
            {
              group: ['**/db', '**/db/*', '**/lib/*'],
              message: 'Workflows must stay deterministic; use an activity.',
            },
            {
              group: ['**/channels', '**/channels/*'],
              allowTypeImports: true,
              message: 'Workflows call channels through activities (types may be imported).',
            },
            {
              group: ['**/activities', '**/activities/*'],
              allowTypeImports: true,
              message: 'Import activity types only (import type).',
            },
          ],
        },
      ],
    },
  },
  {
    files: [
      'src/cli/**/*.ts',
      'test/**/*.ts',
      'bench/**/*.ts',
      'fuzz/**/*.ts',
      'chaos/**/*.ts',
      'bin/**/*.js',
    ],
    rules: { 'no-console': 'off' },
  },
  {
    files: ['bin/**/*.js', '*.js'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
