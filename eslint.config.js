import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: ['node_modules/**', 'data/**', 'client/dist/**', 'client/src/generated/**'] }),
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true } },
    rules: {
      // node:test's describe/test return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': ['error', {
        allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] }]
      }]
    }
  }
]
