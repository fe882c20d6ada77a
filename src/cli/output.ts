import type { Command, CommanderError, HelpConfiguration } from 'commander'
import { StoreUnavailableError } from '../store/index.ts'

/**
 * How the CLI talks: results on stdout (a key, JSON, JSON Lines) so scripts can read them; notes,
 * summaries of streamed output and errors on stderr, one line each. Under --json a failure is
 * also a JSON object on stdout, {"error":{"code","message"}}, so a script reads one shape.
 * Exit codes: 0 ok, 1 the operation failed, 2 the command line was wrong.
 */

export const print = (line: string): void => { process.stdout.write(line + '\n') }
export const note = (line: string): void => { process.stderr.write(line + '\n') }
export const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`

/**
 * What could forge text output: the control characters (C0, with line feed, carriage return,
 * tab and escape; DEL; C1, with CSI and NEL), the Unicode line and paragraph separators, and
 * the bidirectional controls (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069),
 * which make a terminal show text in another order than it has. Such a character in a value
 * could start a line or a column of its own, move the cursor, or reorder a row.
 */
const UNSAFE_TEXT = /[\p{Cc}\p{Zl}\p{Zp}\p{Bidi_Control}]/u
const UNSAFE_CHARACTERS = /[\p{Cc}\p{Zl}\p{Zp}\p{Bidi_Control}]/gu

/** The text as a JSON string whose every unsafe character is escaped (\n, \t, \u001b, \u202e). */
export function quoted (text: string): string {
  return JSON.stringify(text).replace(UNSAFE_CHARACTERS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/**
 * A value in text output: as it is, or quoted() when it holds an unsafe character or starts
 * with a quote, so a value is one cell of one line whatever a database row holds, and a quoted
 * cell is never mistaken for a plain one.
 */
export function cell (value: string | number | null): string {
  const text = String(value)
  return UNSAFE_TEXT.test(text) || text.startsWith('"') ? quoted(text) : text
}

/** One row of a table on stdout: its cells, each cell()ed, separated by tabs. */
export const printRow = (cells: ReadonlyArray<string | number | null>): void => { print(cells.map(cell).join('\t')) }

/** Refuses a value given on the command line that holds an unsafe character (see UNSAFE_TEXT). */
export function refuseUnsafeText (option: string, text: string | undefined): void {
  if (text !== undefined && UNSAFE_TEXT.test(text)) {
    throw new UsageError(`${option} must not hold control characters (line breaks, tabs, escapes), line or paragraph separators, or bidirectional controls; got ${quoted(text)}`)
  }
}

/**
 * stdout's reader went away before the output ended (`pets export | head -1`): it wanted no
 * more, so the command ends quietly with exit 0. coreutils end by SIGPIPE instead, which a
 * shell with pipefail reports as a failure.
 */
export function isClosedOutput (error: unknown): boolean {
  const code = error instanceof Error && 'code' in error ? error.code : undefined
  return code === 'EPIPE' || (code === 'ERR_STREAM_DESTROYED' && process.stdout.destroyed)
}

/**
 * A file system error in words an operator acts on; `missing`: what ENOENT means here (reading,
 * the file; writing, its folder). Other codes are named as they are, so they can be looked up.
 */
export function fileProblem (error: NodeJS.ErrnoException, missing: 'file' | 'folder'): string {
  switch (error.code) {
    case 'ENOENT': return `no such ${missing}`
    case 'EACCES':
    case 'EPERM': return `permission denied (${error.code})`
    case 'ENOTDIR': return 'a part of the path is a file, not a folder'
    default: return error.code ?? error.message
  }
}

/** The command line was wrong: exit 2, the message and the command's usage on stderr; code `usage`. */
export class UsageError extends Error {}

/**
 * The operation failed: exit 1, the message alone on stderr. `code` names the failure under
 * --json; `result` is what the command did all the same (an import's summary), sent with it.
 */
export class Failure extends Error {
  readonly code: string
  readonly result: Record<string, unknown> | undefined
  constructor (message: string, code = 'failed', result?: Record<string, unknown>) {
    super(message)
    this.code = code
    this.result = result
  }
}

/**
 * The command ran, and its answer is an exit code other than 0 (migrate --status: migrations
 * pending); what it has to say it has printed already.
 */
export class StatusExit extends Error {
  readonly exitCode: number
  constructor (exitCode: number) {
    super(`exit ${exitCode}`)
    this.exitCode = exitCode
  }
}

/** Commander refused the command line; `command` is the one that refused it. */
export class Refusal extends Error {
  readonly command: Command
  readonly code: string
  constructor (command: Command, refusal: CommanderError) {
    super(refusal.message)
    this.command = command
    this.code = refusal.code
  }
}

/** `keys create`: the words that name a command, without the program's name. */
export function commandPath (command: Command): string {
  return command.parent ? [commandPath(command.parent), command.name()].filter(Boolean).join(' ') : ''
}

const rootOf = (command: Command): Command => command.parent ? rootOf(command.parent) : command

export const usageLine = (command: Command) => `Usage: ${command.createHelp().commandUsage(command)}`

/** The help lists every command with its usage, and its summary under it. */
export const helpLayout: HelpConfiguration = {
  visibleCommands: (command) => leaves(command),
  subcommandTerm: (command) => `${commandPath(command)} ${command.usage()}`.trim(),
  formatItem: (term, _termWidth, description, helper) => {
    if (!description) return `  ${term}`
    return `  ${term}\n      ${helper.boxWrap(description, (helper.helpWidth ?? 80) - 6).replaceAll('\n', '\n      ')}`
  }
}

/** `keys create` rather than `keys`: the commands that run something. */
const leaves = (command: Command): Command[] => command.commands.flatMap((sub) => sub.commands.length ? leaves(sub) : [sub])

/** Writes what went wrong in `command` and returns the exit code; `json`: the command line asked for --json. */
export function reportError (command: Command, error: unknown, json: boolean): number {
  if (error instanceof Refusal) return reportRefusal(error, json)
  if (error instanceof StatusExit) return error.exitCode
  const message = error instanceof Error ? error.message : String(error)
  note(`${prefix(command)}: ${message}`)
  if (json) printError(codeOf(error), message, error instanceof Failure ? error.result : undefined)
  if (!(error instanceof UsageError)) return 1
  note(usageLine(command))
  return 2
}

const prefix = (command: Command) => ['petstore', commandPath(command)].filter(Boolean).join(' ')

function codeOf (error: unknown): string {
  if (error instanceof UsageError) return 'usage'
  if (error instanceof Failure) return error.code
  if (error instanceof StoreUnavailableError) return 'unavailable'
  return 'failed'
}

function printError (code: string, message: string, result?: Record<string, unknown>): void {
  print(JSON.stringify({ ...result, error: { code, message } }))
}

/** Commander's messages in the CLI's style: one line, after the command's name, then its usage. */
function reportRefusal ({ command, code, message }: Refusal, json: boolean): number {
  switch (code) {
    case 'commander.helpDisplayed':
    case 'commander.version':
      return 0
    // A group (keys, pets) without its command: commander has written the group's help on stderr.
    case 'commander.help':
      if (json) printError('usage', `${JSON.stringify(commandPath(command))} needs a command`)
      return 2
    // One line and where to look, not the whole help: the mistake stays on screen.
    case 'commander.unknownCommand': {
      const suggestion = /\(Did you mean (\S+)\?\)/.exec(message)?.[1]
      const text = `unknown command ${JSON.stringify([commandPath(command), command.args[0]].filter(Boolean).join(' '))}${suggestion ? ` (did you mean ${suggestion}?)` : ''}`
      note(`petstore: ${text}`)
      if (json) printError('usage', text)
      note(`see: ${[rootOf(command).name(), commandPath(command), '--help'].filter(Boolean).join(' ')}`)
      return 2
    }
  }
  const text = code === 'commander.excessArguments'
    ? `unexpected argument ${JSON.stringify(command.args[command.registeredArguments.length])}`
    : oneLine(message)
  note(`${prefix(command)}: ${text}`)
  if (json) printError('usage', text)
  note(usageLine(command))
  return 2
}

/** "error: unknown option '--nmae'\n(Did you mean --name?)" → "Unknown option '--nmae' (did you mean --name?)" */
function oneLine (message: string): string {
  const [first = '', ...rest] = message.replace(/^error: /, '').split('\n')
  const hint = rest.join(' ').replace(/^\(Did/, '(did')
  return [first.charAt(0).toUpperCase() + first.slice(1), hint].filter(Boolean).join(' ')
}
