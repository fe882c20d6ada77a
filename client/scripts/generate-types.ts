import { readFileSync, writeFileSync } from 'node:fs'
import openapiTS, { astToString } from 'openapi-typescript'
import ts from 'typescript'

/**
 * The client's types come from the committed contract, never from server code.
 * int64 becomes bigint: the client reads and writes those values exactly.
 */

export const CONTRACT = new URL('../../openapi.json', import.meta.url)
export const GENERATED = new URL('../src/generated/openapi.ts', import.meta.url)

const HEADER = '// Generated from openapi.json by `npm run generate -w @petstore/client`. Do not edit.\n\n'

export async function generateTypes (): Promise<string> {
  const document = JSON.parse(readFileSync(CONTRACT, 'utf8'))
  const ast = await openapiTS(document, {
    transform (schema) {
      if (schema.format === 'int64') return ts.factory.createKeywordTypeNode(ts.SyntaxKind.BigIntKeyword)
      return undefined
    }
  })
  return HEADER + astToString(ast)
}

if (import.meta.main) {
  writeFileSync(GENERATED, await generateTypes())
  process.stdout.write(`wrote ${GENERATED.pathname}\n`)
}
