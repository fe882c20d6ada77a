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
 * their labels on every call (a sorted join of the values), and its startTimer adds closures
 * and an Object.assign: at an answer of a few dozen microseconds, with a store call timed on
 * every request, that was 2–3 % of a request for each. Here an observation costs one map
 * lookup by the joined label values and three additions; prom-client's registry reads the
 * totals when /metrics is served, through get() in the shape its own metrics give (the
 * exposition is the same, as test/series-metrics.test.ts checks against prom-client's).
 */
export class SeriesMetrics<L extends string> {
  readonly #series = new Map<string, Series<L>>()
  readonly #bounds: readonly number[]
  readonly histogram: Metric
  readonly counter: Metric | undefined

  constructor (histogram: MetricText, bounds: readonly number[], counter?: MetricText) {
    this.#bounds = bounds
    this.histogram = this.#metric(histogram, 'histogram', () => this.#histogramValues(histogram.name))
    this.counter = counter && this.#metric(counter, 'counter', () => [...this.#series.values()].map((series) => ({ labels: series.labels, value: series.count })))
  }

  /**
   * Counts an observation in the series that `id` (the label values, joined) names, and says
   * whether there was one: the caller makes the labels object only when there was not.
   */
  observe (id: string, seconds: number): boolean {
    const series = this.#series.get(id)
    if (series === undefined) return false
    this.#count(series, seconds)
    return true
  }

  /** Starts the series `id` names with its labels, and counts its first observation. */
  start (id: string, labels: Record<L, string>, seconds: number): void {
    const series = { labels, count: 0, sum: 0, perBucket: new Float64Array(this.#bounds.length + 1) }
    this.#series.set(id, series)
    this.#count(series, seconds)
  }

  #count (series: Series<L>, seconds: number): void {
    series.count++
    series.sum += seconds
    let bucket = 0
    while (bucket < this.#bounds.length && seconds > this.#bounds[bucket]!) bucket++
    series.perBucket[bucket]!++
  }

  #histogramValues (name: string): Sample[] {
    const values: Sample[] = []
    for (const { labels, count, sum, perBucket } of this.#series.values()) {
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
      reset: () => { this.#series.clear() }
    }
    return metric as unknown as Metric
  }
}

/** http_requests_total and http_request_duration_seconds, per (route, method, status). */
export class RequestMetrics {
  readonly #series: SeriesMetrics<'route' | 'method' | 'status'>
  readonly counter: Metric
  readonly histogram: Metric

  constructor (counter: MetricText, histogram: MetricText, bounds: readonly number[]) {
    this.#series = new SeriesMetrics(histogram, bounds, counter)
    this.counter = this.#series.counter!
    this.histogram = this.#series.histogram
  }

  record (route: string, method: string, status: number, seconds: number): void {
    const id = route + ' ' + method + ' ' + status
    if (!this.#series.observe(id, seconds)) this.#series.start(id, { route, method, status: String(status) }, seconds)
  }
}

/** The duration of store calls, per (operation, outcome). */
export class StoreDurations {
  readonly #series: SeriesMetrics<'operation' | 'outcome'>
  readonly histogram: Metric

  constructor (histogram: MetricText, bounds: readonly number[]) {
    this.#series = new SeriesMetrics(histogram, bounds)
    this.histogram = this.#series.histogram
  }

  record (operation: string, outcome: 'ok' | 'error', seconds: number): void {
    const id = operation + ' ' + outcome
    if (!this.#series.observe(id, seconds)) this.#series.start(id, { operation, outcome }, seconds)
  }
}
