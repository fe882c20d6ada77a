import { createReadStream, statSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { Readable, Writable } from 'node:stream'
import { Command } from 'commander'
import { BODY_LIMIT_TEXT, PET_STATUSES, type PetStatus } from '../contract/schemas.ts'
import { count, Failure, fileProblem, UsageError } from './output.ts'
import { exportPets, importPets, type RejectedLine } from './pets-jsonl.ts'
import { createProgress, type ProgressStream } from './progress.ts'
import type { CommandStore } from './command-store.ts'

/** pets import and pets export: all pets in or out as JSON Lines, with a progress bar on a terminal. */

/** Where the pets commands read and write: the process's own streams, or a test's. */
export interface CommandIo { readonly stdin: Readable, readonly stdout: Writable, readonly stderr: ProgressStream }

const PROCESS_IO: CommandIo = {
  // Read only for `-`: touching process.stdin opens it.
  get stdin () { return process.stdin },
  stdout: process.stdout,
  stderr: process.stderr
}

export interface ImportCommandOptions { batchSize?: string, startLine?: string, rejects?: string, skipExisting?: boolean, json?: boolean }

export function petsCommand (store: CommandStore, io: CommandIo = PROCESS_IO): Command {
  const pets = new Command('pets').description('Import and export pets as JSON Lines.').usage('<command> [options]')
  pets.command('import')
    .description(`Add the pets of a JSON Lines file (- for stdin), checked like createPet, N per transaction (default 500). A line over ${BODY_LIMIT_TEXT}, the largest body createPet takes, is a bad line. A bad line stops the import: batches before it stay, nothing of its batch is written. With --rejects, bad lines are written to FILE instead, every valid line is imported, and the exit code is 1 when any line was rejected.`)
    .usage('FILE.jsonl [--skip-existing] [--batch-size N] [--start-line N] [--rejects FILE] [--json]')
    .argument('[file]')
    .option('--skip-existing', 'keep the id each line carries (as pets export writes it) and skip a line whose pet is stored already under that id, so that running the import again adds nothing; a new id must be above every id the store has assigned')
    .option('--batch-size <N>', 'pets per transaction, 1 to 10000 (default 500)')
    .option('--start-line <N>', 'the first line to read, to resume an import a bad line stopped (default 1)')
    .option('--rejects <FILE>', 'write each bad line to FILE as {"line":N,"reason":"…","text":"…"} and go on; text is only the first 256 bytes of a line over the limit')
    .option('--json', 'print the summary as JSON')
    .action(async (file: string | undefined, options: ImportCommandOptions) => importFile(store, file, options, io))
  pets.command('export')
    .description('Write every pet (with that status) to stdout as JSON Lines, in id order, int64 exact. The summary goes to stderr.')
    .usage('[--status STATUS]')
    .option('--status <STATUS>', `only the pets with this status: ${PET_STATUSES.join(', ')}`)
    .action(async (options: { status?: string }) => {
      const status = petStatus(options.status)
      const s = await store.openExisting()
      const total = status === undefined ? await s.countPets() : undefined
      const exported = await exportPets(s, io.stdout, { status, progress: createProgress(io.stderr, total, 'pets') })
      io.stderr.write(`exported ${count(exported, 'pet')}\n`)
    })
  return pets
}

/** `pets import`: its summary on stdout once the progress bar is erased; a failure is thrown after that too. */
export async function importFile (store: CommandStore, file: string | undefined, options: ImportCommandOptions, io: CommandIo): Promise<void> {
  if (file === undefined) throw new UsageError('expected the file to import (FILE.jsonl, or - for stdin)')
  const batchSize = positiveInteger(options.batchSize, '--batch-size', 500, 10_000)
  const startLine = positiveInteger(options.startLine, '--start-line', 1, Number.MAX_SAFE_INTEGER)
  if (options.rejects !== undefined && file !== '-' && resolve(options.rejects) === resolve(file)) {
    throw new UsageError('--rejects needs a file other than the one imported')
  }
  const size = file === '-' ? undefined : fileSize(file)
  const rejects = options.rejects === undefined ? undefined : await openRejects(options.rejects)
  try {
    const s = await store.open()
    await s.migrate()
    const started = performance.now()
    const input = file === '-' ? io.stdin : createReadStream(file)
    const summary = await importPets(s, input, { batchSize, startLine, progress: createProgress(io.stderr, size, 'pets'), reject: rejects?.write, skipExisting: options.skipExisting })
    const seconds = ((performance.now() - started) / 1000).toFixed(2)
    const rejected = options.rejects === undefined ? '' : `; ${count(summary.rejected, 'line')} rejected`
    const skipped = summary.skipped === undefined ? '' : ` (${count(summary.skipped, 'pet')} already there, skipped)`
    const line = `imported ${count(summary.imported, 'pet')}${skipped} from ${count(summary.lines, 'line')} in ${count(summary.batches, 'transaction')} (${seconds} s)${rejected}`
    // With rejected lines the summary is still the output; under --json the failure (exit 1) carries it.
    if (!options.json) io.stdout.write(`${line}\n`)
    if (summary.rejected > 0) throw new Failure(`${count(summary.rejected, 'line')} rejected, listed in ${options.rejects}`, 'lines_rejected', { ...summary })
    if (options.json) io.stdout.write(`${JSON.stringify(summary)}\n`)
  } finally {
    await rejects?.close()
  }
}

/** The file's size is the bar's total; a directory or a missing file is refused in one line. */
function fileSize (file: string): number {
  let stats
  try {
    stats = statSync(file)
  } catch (error) {
    throw new Failure(`cannot read ${file}: ${fileProblem(error as NodeJS.ErrnoException, 'file')}`, 'cannot_read')
  }
  if (stats.isDirectory()) throw new Failure(`${file} is a directory, not a JSON Lines file`, 'cannot_read')
  return stats.size
}

/** The --rejects file, created (or emptied) before the import starts, so a path it cannot write stops nothing half-way. */
async function openRejects (path: string): Promise<{ write: (rejected: RejectedLine) => Promise<void>, close: () => Promise<void> }> {
  const handle = await open(path, 'w').catch((error: NodeJS.ErrnoException) => {
    throw new Failure(`cannot write ${path}: ${fileProblem(error, 'folder')}`, 'cannot_write')
  })
  return {
    write: async (rejected) => { await handle.write(JSON.stringify(rejected) + '\n') },
    close: () => handle.close()
  }
}

function positiveInteger (text: string | undefined, option: string, fallback: number, max: number): number {
  if (text === undefined) return fallback
  if (!/^[1-9]\d*$/.test(text) || Number(text) > max) throw new UsageError(`${option} needs a whole number from 1 to ${max}; got ${JSON.stringify(text)}`)
  return Number(text)
}

function petStatus (text: string | undefined): PetStatus | undefined {
  if (text === undefined) return undefined
  const status = PET_STATUSES.find((known) => known === text)
  if (!status) throw new UsageError(`--status must be one of ${PET_STATUSES.join(', ')}; got ${JSON.stringify(text)}`)
  return status
}
