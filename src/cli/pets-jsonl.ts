import type { Readable, Writable } from 'node:stream'
import { once } from 'node:events'
import { ApiError } from '../http/errors.ts'
import { parseJsonBody } from '../http/json-body.ts'
import { Failure } from './output.ts'
import type { Progress } from './progress.ts'
import { BODY_LIMIT_BYTES, BODY_LIMIT_TEXT, INT64_MAX, type NewPet, type Pet, type PetStatus } from '../contract/schemas.ts'
import type { Store } from '../store/types.ts'
import { createValidatorCompiler } from '../http/validation.ts'

/**
 * Bulk import and export of pets as JSON Lines: one pet per line, int64 fields exact.
 * Import reads each line with the same rules as createPet and writes each batch in one
 * transaction. A line's `id` is ignored (the store assigns ids), unless the import keeps ids
 * (--skip-existing): then each line must carry one, and a pet already stored under it is skipped.
 */

/** A line that is not a valid pet: its number, why, and the line as it was (only its start when it is over MAX_LINE_BYTES). */
export interface RejectedLine { line: number, reason: string, text: string }

/**
 * Lines are checked like createPet's bodies, and createPet refuses a body over BODY_LIMIT_BYTES:
 * a longer line cannot be a pet the API would take. It is never held whole (a line of hundreds
 * of megabytes would not fit in a string), only its first LINE_START_BYTES, to be named by.
 */
export const MAX_LINE_BYTES = BODY_LIMIT_BYTES
const LINE_START_BYTES = 256

export interface ImportOptions {
  batchSize: number
  startLine: number
  progress: Progress
  /** Given: a bad line is handed here and the import goes on. Not given: a bad line stops it (ImportLineError). */
  reject?: (rejected: RejectedLine) => Promise<void>
  /** Each pet keeps the id its line carries; a pet stored already under that id is skipped. */
  skipExisting?: boolean
}
/** lines: the lines read, from the start line on; skipped: only when the import keeps ids, the pets already stored under their ids. */
export interface ImportSummary { imported: number, skipped?: number, lines: number, batches: number, rejected: number }

/** A line that is not a valid pet. Batches before it stay written; the message says how to resume. */
export class ImportLineError extends Failure {
  constructor (message: string) {
    super(message, 'invalid_line')
  }
}

const validatePet = createValidatorCompiler()({ schema: { $ref: 'NewPet' } as object, httpPart: 'body', method: 'POST', url: '/v1/pets' }) as
  (data: unknown) => { value: NewPet } | { error: ApiError }

/** The pet a line holds, checked like createPet's body; with withId its int64 `id` too. Else why not. */
function readPet (text: string, withId: boolean): NewPet | Pet | string {
  try {
    const value = parseJsonBody(text)
    const id = withId ? idOf(value) : undefined
    if (typeof id === 'string') return id
    const result = validatePet(value)
    if ('value' in result) return id === undefined ? result.value : { id, ...result.value }
    const { details, message } = result.error
    return details?.map((d) => `${d.field.replace(/^body\.?/, '') || 'the line'} ${d.message}`).join('; ') ?? message
  } catch (error) {
    if (error instanceof ApiError) return error.message.replace(/^The request body/, 'the line')
    throw error
  }
}

/** The id a line names for its pet, or why it cannot be one. */
function idOf (value: unknown): bigint | string {
  const id = typeof value === 'object' && value !== null ? (value as { id?: unknown }).id : undefined
  if (typeof id === 'bigint' && id >= 1n && id <= INT64_MAX) return id
  return `id must be a whole number from 1 to ${INT64_MAX} (--skip-existing keeps the id of each line); got ${id === undefined ? 'none' : JSON.stringify(String(id))}`
}

export async function importPets (store: Store, input: Readable, options: ImportOptions): Promise<ImportSummary> {
  const { batchSize, startLine, progress, reject, skipExisting = false } = options
  let batch: Array<NewPet | Pet> = []
  // With skipExisting, the line of each pet in the batch: a refused pet is named by its line.
  let batchLines: InputLine[] = []
  let batchLineNumbers: number[] = []
  let lineNumber = 0
  let bytes = 0
  let imported = 0
  let skipped = 0
  let batches = 0
  let rejected = 0
  let committedThrough = startLine - 1
  const stop = (line: number, reason: string) => {
    const kept = imported + skipped === 0
      ? 'Nothing was imported.'
      : `${imported + skipped} pets from lines ${startLine}–${committedThrough} were imported${skipped === 0 ? '' : ' or already there'}; nothing after line ${committedThrough}.`
    return new ImportLineError(`line ${line}: ${reason}. ${kept} Fix line ${line}, then run again with --start-line ${committedThrough + 1}.`)
  }
  /** The batch with its ids: a refused pet is handed to reject and the rest tried again, or stops the import. */
  const writeWithIds = async () => {
    for (;;) {
      const result = await store.insertPetsWithIds(batch as Pet[])
      if (result.outcome === 'written') {
        imported += result.inserted
        skipped += result.skipped
        return
      }
      if (!reject) throw stop(batchLineNumbers[result.index]!, result.reason)
      rejected++
      await reject({ line: batchLineNumbers[result.index]!, reason: result.reason, text: batchLines[result.index]!.text })
      for (const list of [batch, batchLines, batchLineNumbers]) list.splice(result.index, 1)
      if (batch.length === 0) return
    }
  }
  const flush = async () => {
    if (batch.length === 0) return
    if (skipExisting) await writeWithIds()
    else imported += await store.insertPets(batch)
    batches++
    batch = []
    batchLines = []
    batchLineNumbers = []
    committedThrough = lineNumber
    // Once a transaction, not once a line: the bar shows committed pets, and the loop over lines
    // stays free of the bar's bookkeeping.
    progress.update(bytes, imported)
  }
  try {
    for await (const line of inputLines(input, MAX_LINE_BYTES, LINE_START_BYTES)) {
      lineNumber++
      bytes += line.bytes
      if (lineNumber < startLine || (line.whole && line.text.trim() === '')) continue
      const pet = line.whole ? readPet(line.text, skipExisting) : `the line is ${line.length} bytes, longer than the ${BODY_LIMIT_TEXT} createPet takes`
      if (typeof pet === 'string' && reject) {
        rejected++
        await reject({ line: lineNumber, reason: pet, text: line.text })
        continue
      }
      if (typeof pet === 'string') throw stop(lineNumber, pet)
      batch.push(pet)
      if (skipExisting) {
        batchLines.push(line)
        batchLineNumbers.push(lineNumber)
      }
      if (batch.length >= batchSize) await flush()
    }
    await flush()
  } finally {
    progress.finish()
  }
  // The lines read: from the start line on, as --start-line skips the others unread.
  const lines = Math.max(0, lineNumber - startLine + 1)
  return skipExisting ? { imported, skipped, lines, batches, rejected } : { imported, lines, batches, rejected }
}

/**
 * One line of the input: its text without the line end, or only the start of a line longer than
 * maxBytes (whole: false); its length in bytes without the line end, and bytes with it.
 */
export interface InputLine { text: string, whole: boolean, length: number, bytes: number }

const LF = 0x0a
const CR = 0x0d

/**
 * The input's lines, read chunk by chunk and split on \n; a \r before it is dropped (JSON Lines
 * allows \r\n). Memory stays within maxBytes and a chunk: a longer line is skipped to its end,
 * keeping only its first startBytes.
 */
export async function * inputLines (input: Readable, maxBytes: number, startBytes: number): AsyncGenerator<InputLine> {
  // The line so far while it may still fit (maxBytes, and one more for a \r), else its start.
  let parts: Buffer[] = []
  let held = 0
  let start: string | undefined
  let length = 0
  let last = 0
  const line = (ending: number): InputLine => {
    const bytes = length + ending
    let result: InputLine
    if (start !== undefined) {
      result = { text: start, whole: false, length: last === CR ? length - 1 : length, bytes }
    } else {
      const all = parts.length === 1 ? parts[0]! : Buffer.concat(parts, held)
      const size = last === CR ? held - 1 : held
      result = size > maxBytes
        ? { text: startOf(all, startBytes), whole: false, length: size, bytes }
        : { text: all.toString('utf8', 0, size), whole: true, length: size, bytes }
    }
    parts = []
    held = 0
    start = undefined
    length = 0
    last = 0
    return result
  }
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    let from = 0
    while (from < buffer.length) {
      const end = buffer.indexOf(LF, from)
      const to = end === -1 ? buffer.length : end
      if (to > from) {
        length += to - from
        last = buffer[to - 1]!
        if (start === undefined && length <= maxBytes + 1) {
          parts.push(buffer.subarray(from, to))
          held += to - from
        } else if (start === undefined) {
          parts.push(buffer.subarray(from, to))
          start = startOf(Buffer.concat(parts, Math.min(startBytes, held + to - from)), startBytes)
          parts = []
          held = 0
        }
      }
      if (end === -1) break
      yield line(1)
      from = end + 1
    }
  }
  if (length > 0) yield line(0)
}

/** The first bytes of a line as text, cut before a character the cut would split. */
function startOf (bytes: Buffer, count: number): string {
  return new TextDecoder().decode(bytes.subarray(0, count), { stream: true })
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
        // A reader that went away (`pets export | head -1`) ends the export: its error is EPIPE.
        if (output.destroyed) throw output.errored ?? new Error('the output was closed')
        if (!output.write(petLine(pet))) await Promise.race([once(output, 'drain'), once(output, 'close')])
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
