import cliProgress from 'cli-progress'

/** Where progress is drawn: a terminal (process.stderr), or any stream shaped like one. */
export type ProgressStream = NodeJS.WritableStream & { isTTY?: boolean, columns?: number }

/** How a command reports progress: `done` of the total (bytes read, pets written), `count` pets so far. */
export interface Progress {
  update(done: number, count: number): void
  /** Erases the bar; call it on failure too, or the bar's redraw timer keeps the process alive. */
  finish(): void
}

const NO_PROGRESS: Progress = { update () {}, finish () {} }

/**
 * A one-line progress bar, redrawn at most ten times a second, and erased at the end so that what
 * stays on the screen is the summary line. Only on a terminal: piped or redirected output gets no
 * bar, so logs and scripts see the summary alone. Without a total (stdin) it counts.
 */
export function createProgress (stream: ProgressStream, total: number | undefined, noun: string): Progress {
  if (!stream.isTTY) return NO_PROGRESS
  const bar = new cliProgress.SingleBar({
    stream,
    // The count is formatted when a frame is drawn, not on each of the many updates.
    format: (options, params, payload: { count: number }) => {
      const counted = `${payload.count.toLocaleString('en-US')} ${noun}`
      if (!total) return counted
      return `[${cliProgress.Format.BarFormat(params.progress, options)}] ${String(Math.floor(params.progress * 100)).padStart(3)}% ${counted}`
    },
    barsize: Math.max(10, Math.min(40, (stream.columns || 80) - 30)),
    barCompleteChar: '#',
    barIncompleteChar: '.',
    clearOnComplete: true,
    // Trim to the terminal's width instead of switching its line wrapping off, which an
    // interrupted import would leave switched off.
    linewrap: true
  })
  bar.start(total || 1, 0, { count: 0 })
  return {
    update (done, count) { bar.update(done, { count }) },
    finish () { bar.stop() }
  }
}
