import { createReadStream, statSync } from 'node:fs'
import { Command } from 'commander'
import { PET_STATUSES, type PetStatus } from '../contract/schemas.ts'
import { count, Failure, note, print, UsageError } from './output.ts'
import { exportPets, importPets } from './pets-jsonl.ts'
import { createProgress } from './progress.ts'
import type { CommandStore } from './store.ts'

/** pets import and pets export: all pets in or out as JSON Lines, with a progress bar on a terminal. */

interface ImportCommandOptions { batchSize?: string, startLine?: string, json?: boolean }

export function petsCommand (store: CommandStore): Command {
  const pets = new Command('pets').description('Import and export pets as JSON Lines.').usage('<command> [options]')
  pets.command('import')
    .description('Add the pets of a JSON Lines file (- for stdin), checked like createPet, N per transaction (default 500). A bad line stops the import: batches before it stay, nothing of its batch is written.')
    .usage('FILE.jsonl [--batch-size N] [--start-line N] [--json]')
    .argument('[file]')
    .option('--batch-size <N>', 'pets per transaction, 1 to 10000 (default 500)')
    .option('--start-line <N>', 'the first line to read, to resume an import a bad line stopped (default 1)')
    .option('--json', 'print the summary as JSON')
    .action(async (file: string | undefined, options: ImportCommandOptions) => importFile(store, file, options))
  pets.command('export')
    .description('Write every pet (with that status) to stdout as JSON Lines, in id order, int64 exact. The summary goes to stderr.')
    .usage('[--status STATUS]')
    .option('--status <STATUS>', `only the pets with this status: ${PET_STATUSES.join(', ')}`)
    .action(async (options: { status?: string }) => {
      const status = petStatus(options.status)
      const s = await store.openExisting()
      const total = status === undefined ? await s.countPets() : undefined
      const exported = await exportPets(s, process.stdout, { status, progress: createProgress(process.stderr, total, 'pets') })
      note(`exported ${count(exported, 'pet')}`)
    })
  return pets
}

async function importFile (store: CommandStore, file: string | undefined, options: ImportCommandOptions): Promise<void> {
  if (file === undefined) throw new UsageError('expected the file to import (FILE.jsonl, or - for stdin)')
  const batchSize = positiveInteger(options.batchSize, '--batch-size', 500, 10_000)
  const startLine = positiveInteger(options.startLine, '--start-line', 1, Number.MAX_SAFE_INTEGER)
  // The file's size is the bar's total; stdin has none, and the bar counts instead.
  let size: number | undefined
  if (file !== '-') {
    try {
      size = statSync(file).size
    } catch (error) {
      throw new Failure(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
    }
  }
  const s = await store.open()
  await s.migrate()
  const started = performance.now()
  const input = file === '-' ? process.stdin : createReadStream(file)
  const summary = await importPets(s, input, { batchSize, startLine, progress: createProgress(process.stderr, size, 'pets') })
  const seconds = ((performance.now() - started) / 1000).toFixed(2)
  print(options.json
    ? JSON.stringify(summary)
    : `imported ${count(summary.imported, 'pet')} from ${count(summary.lines, 'line')} in ${count(summary.batches, 'transaction')} (${seconds} s)`)
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
