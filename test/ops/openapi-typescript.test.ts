import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'

const ROOT = new URL('../..', import.meta.url).pathname
const GENERATOR = join(ROOT, 'node_modules/.bin/openapi-typescript')

/** What a third-party generator makes of openapi.json: the types a client written from it gets. */
async function generatedTypes (t: { after(fn: () => void): void }): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-openapi-typescript-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const output = join(dir, 'types.ts')
  await promisify(execFile)(process.execPath, [GENERATOR, join(ROOT, 'openapi.json'), '-o', output], { cwd: ROOT })
  return readFileSync(output, 'utf8')
}

const lineOf = (text: string, pattern: RegExp) => text.split('\n').filter((line) => pattern.test(line)).map((line) => line.trim())

test('openapi-typescript makes PetStatus one string union, used by Pet.status, NewPet.status and the status query parameter', { timeout: 60_000 }, async (t) => {
  const types = await generatedTypes(t)
  assert.deepEqual(lineOf(types, /"available" \| "pending" \| "sold"/), ['PetStatus: "available" | "pending" | "sold";'], 'the union is written once')
  assert.deepEqual(lineOf(types, /^\s*status\?:/), [
    'status?: components["schemas"]["PetStatus"];',
    'status?: components["schemas"]["PetStatus"];',
    'status?: components["schemas"]["PetStatus"];'
  ], 'NewPet, Pet and listPets\' query name it')
  const listPets = types.slice(types.indexOf('    listPets: {'), types.indexOf('    createPet: {'))
  assert.match(listPets, /query\?: \{[^}]*status\?: components\["schemas"\]\["PetStatus"\];/)
})

test('openapi-typescript makes Error.code a string union of the documented codes', { timeout: 60_000 }, async (t) => {
  const types = await generatedTypes(t)
  const { ERROR_CODES } = await import('../../src/contract/schemas.ts')
  assert.deepEqual(lineOf(types, /^\s*code:/), [`code: ${Object.keys(ERROR_CODES).map((code) => `"${code}"`).join(' | ')};`])
})

/** One operation's type from `operations`, its doc comments left out, lines trimmed. */
function operationLines (types: string, operationId: string): string[] {
  const start = types.indexOf(`\n    ${operationId}: {\n`)
  assert.notEqual(start, -1, `operations.${operationId} is generated`)
  const block = types.slice(start + 1, types.indexOf('\n    };\n', start) + 7)
  return block.split('\n').map((line) => line.trim()).filter((line) => !/^(\/\*\*|\*)/.test(line))
}

/** The lines of the first `{ … }` opened by the line `opening`, nested braces included. */
function braced (lines: string[], opening: string): string[] {
  const start = lines.indexOf(opening)
  assert.notEqual(start, -1, `${opening} is generated`)
  let depth = 0
  for (let i = start; i < lines.length; i++) {
    depth += (lines[i]!.match(/\{/g) ?? []).length - (lines[i]!.match(/\}/g) ?? []).length
    if (depth === 0) return lines.slice(start, i + 1)
  }
  assert.fail(`${opening} is never closed`)
}

test('openapi-typescript gives listPets and getPet an optional string If-None-Match header and a 304 with no content', { timeout: 60_000 }, async (t) => {
  const types = await generatedTypes(t)
  const notModified = (extra: string[]) => [
    '304: {',
    'headers: {',
    '"RateLimit-Policy"?: string;',
    'RateLimit?: string;',
    '"Access-Control-Allow-Origin"?: "*";',
    'ETag?: string;',
    '"Cache-Control"?: string;',
    ...extra,
    '[name: string]: unknown;',
    '};',
    'content?: never;',
    '};'
  ]
  for (const [operationId, extra] of [['listPets', ['Link?: string;']], ['getPet', ['Deprecation?: string;', 'Sunset?: string;', 'Link?: string;']]] as const) {
    const operation = operationLines(types, operationId)
    assert.deepEqual(braced(operation, 'header?: {'), ['header?: {', '"If-None-Match"?: string;', '};'], `${operationId}'s header parameters`)
    assert.deepEqual(braced(operation, '304: {'), notModified([...extra]), `${operationId}'s 304`)
  }
})
