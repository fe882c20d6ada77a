import neostandard from 'neostandard'

// An adapter's files: src/store/sqlite/… or src/store/postgres/… (\x2F is "/", which a selector's regex cannot hold).
const ADAPTER_FILES = '(^|\\x2F)store\\x2F(sqlite|postgres)\\x2F'
const THROUGH_THE_SEAM = 'Outside src/store/, reach a database through src/store/index.ts (openStore, the Store interface, the URL helpers), not an adapter\'s files.'

export default [
  ...neostandard({ ts: true, ignores: ['node_modules/**', 'data/**', 'client/dist/**', 'client/src/generated/**'] }),
  {
    files: ['**/*.ts'],
    // A script saved at the top level (the README's client example) is linted with default options.
    languageOptions: { parserOptions: { projectService: { allowDefaultProject: ['*.ts'] } } },
    rules: {
      // node:test's describe/test return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': ['error', {
        allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] }]
      }]
    }
  },
  {
    // One store seam: adding a store changes src/store/ and what the compiler points at there.
    files: ['src/**/*.ts'],
    ignores: ['src/store/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: ADAPTER_FILES, message: THROUGH_THE_SEAM }] }],
      // no-restricted-imports does not look at import(): the adapters are loaded that way.
      'no-restricted-syntax': ['error', { selector: `ImportExpression[source.value=/${ADAPTER_FILES}/]`, message: THROUGH_THE_SEAM }]
    }
  }
]
