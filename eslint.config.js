import neostandard from 'neostandard'

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
  }
]
