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
 * bar, so logs and scripts see the summary alone. With a total: the bar, the share done, the count,
 * the rate and cli-progress's estimate of the time left; without one (stdin): the count and the rate.
 */
export function createProgress (stream: ProgressStream, total: number | undefined, noun: string): Progress {
  if (!stream.isTTY) return NO_PROGRESS
  const started = Date.now()
  const bar = new cliProgress.SingleBar({
    stream,
    format: total ? '[{bar}] {percentage}% {count} · {rate} · ETA {eta_formatted}' : '{count} · {rate}',
    // The estimate is a number of seconds once an update has come; before that, or with no
    // progress between updates, cli-progress has a placeholder string. Zero-padded (03s, 02m05s),
    // as the percentage's padding is spaces.
    formatTime: (seconds, options, roundTo) => typeof seconds === 'number' ? cliProgress.Format.TimeFormat(seconds, { ...options, autopaddingChar: '0' }, roundTo) : '--',
    autopadding: true,
    // Updates come once a transaction or page: the estimate spans the last hundred, so one slow
    // commit does not swing it.
    etaBuffer: 100,
    barsize: Math.max(MIN_BAR, Math.min(MAX_BAR, (stream.columns || 80) - TEXT_WIDTH)),
    barCompleteChar: '#',
    barIncompleteChar: '.',
    clearOnComplete: true,
    // Trim to the terminal's width instead of switching its line wrapping off, which an
    // interrupted import would leave switched off.
    linewrap: true
  })
  // Formatted once an update (a transaction, a page), not on each frame.
  const payload = (count: number) => {
    const seconds = (Date.now() - started) / 1000
    const rate = seconds > 0 ? Math.round(count / seconds).toLocaleString('en-US') : '--'
    return { count: `${count.toLocaleString('en-US')} ${noun}`, rate: `${rate} ${noun}/s` }
  }
  bar.start(total || 1, 0, payload(0))
  return {
    update (done, count) { bar.update(done, payload(count)) },
    finish () { bar.stop() }
  }
}

// The bar takes what the text around it leaves of the line, within these bounds.
const MIN_BAR = 10
const MAX_BAR = 40
const TEXT_WIDTH = 55
