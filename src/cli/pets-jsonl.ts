import { createInterface } from 'node:readline'
import type { Readable, Writable } from 'node:stream'
import { once } from 'node:events'
import { ApiError } from '../http/errors.ts'
import { parseJsonBody } from '../http/json-body.ts'
import { Failure } from './output.ts'
import type { Progress } from './progress.ts'
import type { NewPet, Pet, PetStatus } from '../contract/schemas.ts'
import type { Store } from '../store/types.ts'
import { createValidatorCompiler } from '../http/validation.ts'

/**
 * Bulk import and export of pets as JSON Lines: one pet per line, int64 fields exact.
 * Import reads each line with the same rules as createPet (a line's `id` is ignored: the store
 * assigns ids), and writes each batch in one transaction.
 */

/** A line that is not a valid pet: its number, why, and the line as it was. */
export interface RejectedLine { line: number, reason: string, text: string }

export interface ImportOptions {
  batchSize: number
  startLine: number
  progress: Progress
  /** Given: a bad line is handed here and the import goes on. Not given: a bad line stops it (ImportLineError). */
  reject?: (rejected: RejectedLine) => Promise<void>
}
export interface ImportSummary { imported: number, lines: number, batches: number, rejected: number }

/** A line that is not a valid pet. Batches before it stay written; the message says how to resume. */
export class ImportLineError extends Failure {
  constructor (message: string) {
    super(message, 'invalid_line')
  }
}

const validatePet = createValidatorCompiler()({ schema: { $ref: 'NewPet' } as object, httpPart: 'body', method: 'POST', url: '/v1/pets' }) as
  (data: unknown) => { value: NewPet } | { error: ApiError }

function readPet (text: string): NewPet | string {
  try {
    const result = validatePet(parseJsonBody(text))
    if ('value' in result) return result.value
    const { details, message } = result.error
    return details?.map((d) => `${d.field.replace(/^body\.?/, '') || 'the line'} ${d.message}`).join('; ') ?? message
  } catch (error) {
    if (error instanceof ApiError) return error.message.replace(/^The request body/, 'the line')
    throw error
  }
}

export async function importPets (store: Store, input: Readable, options: ImportOptions): Promise<ImportSummary> {
  const { batchSize, startLine, progress, reject } = options
  let batch: NewPet[] = []
  let lineNumber = 0
  let bytes = 0
  let imported = 0
  let batches = 0
  let rejected = 0
  let committedThrough = startLine - 1
  const flush = async () => {
    if (batch.length === 0) return
    imported += await store.insertPets(batch)
    batches++
    batch = []
    committedThrough = lineNumber
    // Once a transaction, not once a line: the bar shows committed pets, and the loop over lines
    // stays free of the bar's bookkeeping.
    progress.update(bytes, imported)
  }
  try {
    for await (const line of createInterface({ input, crlfDelay: Infinity })) {
      lineNumber++
      bytes += Buffer.byteLength(line) + 1
      if (lineNumber < startLine || line.trim() === '') continue
      const pet = readPet(line)
      if (typeof pet === 'string' && reject) {
        rejected++
        await reject({ line: lineNumber, reason: pet, text: line })
        continue
      }
      if (typeof pet === 'string') {
        const kept = imported === 0
          ? 'Nothing was imported.'
          : `${imported} pets from lines ${startLine}–${committedThrough} were imported; nothing after line ${committedThrough}.`
        throw new ImportLineError(`line ${lineNumber}: ${pet}. ${kept} Fix line ${lineNumber}, then run again with --start-line ${committedThrough + 1}.`)
      }
      batch.push(pet)
      if (batch.length >= batchSize) await flush()
    }
    await flush()
  } finally {
    progress.finish()
  }
  return { imported, lines: lineNumber, batches, rejected }
}

/** One pet as a JSON line; ids are written as exact integer literals. */
export function petLine (pet: Pet): string {
  const status = pet.status === undefined ? '' : `,"status":${JSON.stringify(pet.status)}`
  return `{"id":${pet.id},"name":${JSON.stringify(pet.name)},"categoryId":${pet.categoryId}${status}}\n`
}

const EXPORT_PAGE = 1000

/** Writes every pet (with that status) in id order, page by page, waiting when the reader is slower. */
export async function exportPets (store: Store, output: Writable, options: { status?: PetStatus, progress: Progress }): Promise<number> {
  let exported = 0
  let afterId: bigint | undefined
  try {
    for (;;) {
      const pets = await store.listPets({ limit: EXPORT_PAGE, status: options.status, afterId })
      for (const pet of pets) {
        if (!output.write(petLine(pet))) await once(output, 'drain')
        exported++
      }
      options.progress.update(exported, exported)
      if (pets.length < EXPORT_PAGE) break
      afterId = pets.at(-1)!.id
    }
  } finally {
    options.progress.finish()
  }
  return exported
}
