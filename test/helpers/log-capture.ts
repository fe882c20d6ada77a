import { Writable } from 'node:stream'

/** A log destination that keeps every line, for tests that read what the service logged. */
export function captureLog (): { stream: Writable, text(): string, entries(): Array<Record<string, unknown>> } {
  const lines: string[] = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } })
  return {
    stream,
    text: () => lines.join(''),
    entries: () => lines.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>)
  }
}
