import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The ZooKeeper client (src/zookeeper-client/) is a library of the ZooKeeper lock engine alone. */
const ZOOKEEPER_CLIENT = {
  group: ['**/zookeeper-client/*', 'zookeeper'],
  message: 'Only the ZooKeeper lock engine (src/lock/zookeeper/) uses the ZooKeeper client: go through the LockEngine contract.',
};

export default tseslint.config(
  { ignores: ['dist/', '.bench-build/', 'node_modules/', 'bench/results/', 'bench/java/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  {
    files: ['test/**', 'bench/**'],
    rules: { 'no-console': 'off' },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/lock/zookeeper/**', 'src/zookeeper-client/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [ZOOKEEPER_CLIENT] }] },
  },
  {
    // The write path returns outcomes; only the HTTP edge writes responses.
    files: ['src/write/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/http/*', '**/http/**'], message: 'src/write must not import the HTTP edge: return a WriteOutcome and let src/http render it.' },
            ZOOKEEPER_CLIENT,
          ],
        },
      ],
    },
  },
  {
    files: ['scripts/**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
