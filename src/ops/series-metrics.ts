import type { Metric } from 'prom-client'

/** One sample line of the exposition, as prom-client's own metrics give them from get(). */
interface Sample { labels: Record<string, string | number>, value: number, metricName?: string }

interface Series<L extends string> {
  labels: Record<L, string>
  count: number
  sum: number
  /** Observations per bucket, not cumulative; the last slot is for values above every bound. */
  perBucket: Float64Array
}

/** A metric's name and help text. */
export interface MetricText { name: string, help: string }

/**
 * A histogram over a fixed set of labels, and optionally a counter of the same observations,
 * exposed as prom-client exposes its own. prom-client's Histogram and Counter check and hash
 * their labels on every call, bound children included (a sorted join of the values), which
 * costs more than 5 % of a cached reply with the request's and the store call's series
 * observed on every request (docs/performance.md). Here the owner finds a series by its label
 * values in maps of its own (one level per label, no string joined per observation), and an
 * observation is three additions; prom-client's registry reads the totals when /metrics is
 * served, through get() in the shape its own metrics give (test/ops/series-metrics.test.ts checks
 * the exposition against prom-client's for the same observations).
 */
export class SeriesMetrics<L extends string> {
  // In the order of their first observation, as prom-client lists its series.
  readonly #series: Array<Series<L>> = []
  readonly #bounds: readonly number[]
  readonly #onReset: () => void
  readonly histogram: Metric
  readonly counter: Metric | undefined

  /** `onReset`: the owner forgets the series it found, as a reset empties them all. */
  constructor (histogram: MetricText, bounds: readonly number[], onReset: () => void, counter?: MetricText) {
    this.#bounds = bounds
    this.#onReset = onReset
    this.histogram = this.#metric(histogram, 'histogram', () => this.#histogramValues(histogram.name))
    this.counter = counter && this.#metric(counter, 'counter', () => this.#series.map((series) => ({ labels: series.labels, value: series.count })))
  }

  /** A new series with these labels, counted from zero. */
  add (labels: Record<L, string>): Series<L> {
    const series = { labels, count: 0, sum: 0, perBucket: new Float64Array(this.#bounds.length + 1) }
    this.#series.push(series)
    return series
  }

  observe (series: Series<L>, seconds: number): void {
    series.count++
    series.sum += seconds
    let bucket = 0
    while (bucket < this.#bounds.length && seconds > this.#bounds[bucket]!) bucket++
    series.perBucket[bucket]!++
  }

  #histogramValues (name: string): Sample[] {
    const values: Sample[] = []
    for (const { labels, count, sum, perBucket } of this.#series) {
      let cumulative = 0
      this.#bounds.forEach((bound, i) => {
        cumulative += perBucket[i]!
        values.push({ labels: { le: bound, ...labels }, value: cumulative, metricName: `${name}_bucket` })
      })
      values.push({ labels: { le: '+Inf', ...labels }, value: count, metricName: `${name}_bucket` })
      values.push({ labels, value: sum, metricName: `${name}_sum` })
      values.push({ labels, value: count, metricName: `${name}_count` })
    }
    return values
  }

  /**
   * An object prom-client's registry takes as a metric: it calls get() and reset(), and may
   * rename it (OpenMetrics output drops a counter's _total), so get() reads the name back.
   * The histogram and its counter count the same observations, so resetting either resets both.
   */
  #metric ({ name, help }: MetricText, type: 'counter' | 'histogram', values: () => Sample[]): Metric {
    const metric: { name: string, help: string, type: string, aggregator: string, get(): Promise<unknown>, reset(): void } = {
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ name: metric.name, help, type, aggregator: 'sum', values: values() }),
      reset: () => {
        this.#series.length = 0
        this.#onReset()
      }
    }
    return metric as unknown as Metric
  }
}

/** http_requests_total and http_request_duration_seconds, per (route, method, status). */
export class RequestMetrics {
  readonly #series: SeriesMetrics<'route' | 'method' | 'status'>
  // route → method → status → series.
  readonly #found = new Map<string, Map<string, Map<number, Series<'route' | 'method' | 'status'>>>>()
  readonly counter: Metric
  readonly histogram: Metric

  constructor (counter: MetricText, histogram: MetricText, bounds: readonly number[]) {
    this.#series = new SeriesMetrics(histogram, bounds, () => { this.#found.clear() }, counter)
    this.counter = this.#series.counter!
    this.histogram = this.#series.histogram
  }

  record (route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.#found.get(route)
    if (byMethod === undefined) this.#found.set(route, byMethod = new Map())
    let byStatus = byMethod.get(method)
    if (byStatus === undefined) byMethod.set(method, byStatus = new Map())
    let series = byStatus.get(status)
    if (series === undefined) byStatus.set(status, series = this.#series.add({ route, method, status: String(status) }))
    this.#series.observe(series, seconds)
  }
}

/** The duration of store calls, per (operation, outcome). */
export class StoreDurations {
  readonly #series: SeriesMetrics<'operation' | 'outcome'>
  // operation → outcome → series.
  readonly #found = new Map<string, Map<string, Series<'operation' | 'outcome'>>>()
  readonly histogram: Metric

  constructor (histogram: MetricText, bounds: readonly number[]) {
    this.#series = new SeriesMetrics(histogram, bounds, () => { this.#found.clear() })
    this.histogram = this.#series.histogram
  }

  record (operation: string, outcome: 'ok' | 'error', seconds: number): void {
    let byOutcome = this.#found.get(operation)
    if (byOutcome === undefined) this.#found.set(operation, byOutcome = new Map())
    let series = byOutcome.get(outcome)
    if (series === undefined) byOutcome.set(outcome, series = this.#series.add({ operation, outcome }))
    this.#series.observe(series, seconds)
  }
}
