import { Histogram, type Registry } from "prom-client"

/** The duration figures of one endpoint: plain numbers, one count per bucket (not cumulative). */
export class DurationCounts {
  readonly counts: Array<number>
  sum = 0
  count = 0

  constructor(readonly endpoint: string, private readonly bounds: ReadonlyArray<number>) {
    this.counts = bounds.map(() => 0)
  }

  /** One request of `seconds`: an addition and a scan of the bounds, no labels hashed, nothing allocated. */
  observe(seconds: number): void {
    const bounds = this.bounds
    for (let i = 0; i < bounds.length; i++) {
      if (seconds <= bounds[i]!) {
        this.counts[i]!++
        break
      }
    }
    this.sum += seconds
    this.count++
  }
}

/** prom-client's shape: `get()` merges `sharedLabels` into `labels`, the text writes `labels` first. */
interface Sample {
  readonly value: number
  readonly labels: Record<string, string | number>
  readonly sharedLabels: { readonly endpoint: string }
  readonly metricName: string
}

/**
 * The request-duration histogram: a prom-client Histogram for its name, type, registry and cluster
 * aggregation, whose samples are read from DurationCounts at scrape time. prom-client's own `observe`
 * hashes the labels and builds objects on every call, which costs more per request than all the
 * other series together; the text it serves is the same.
 */
export class DurationHistogram extends Histogram<"endpoint"> {
  /** `bounds` strictly increasing (the definition checks them). */
  constructor(
    private readonly metricName: string,
    private readonly help: string,
    private readonly bounds: ReadonlyArray<number>,
    registers: Array<Registry>,
    private readonly endpoints: () => Iterable<DurationCounts>
  ) {
    super({ name: metricName, help, labelNames: ["endpoint"], buckets: [...bounds], registers })
  }

  /** Counts for one endpoint, with this histogram's bounds. */
  countsFor(endpoint: string): DurationCounts {
    return new DurationCounts(endpoint, this.bounds)
  }

  /** What prom-client's registry reads to write the text, and its `get()` (cluster aggregation) too. */
  async getForPromString() {
    return { name: this.metricName, help: this.help, type: "histogram", values: this.samples(), aggregator: "sum" }
  }

  /** The samples in prom-client's order: the cumulative buckets, +Inf, sum and count of each endpoint. */
  private samples(): Array<Sample> {
    const bucket = `${this.metricName}_bucket`
    const samples: Array<Sample> = []
    for (const counts of this.endpoints()) {
      const sharedLabels = { endpoint: counts.endpoint }
      let cumulative = 0
      for (let i = 0; i < this.bounds.length; i++) {
        cumulative += counts.counts[i]!
        samples.push({ value: cumulative, labels: { le: this.bounds[i]! }, sharedLabels, metricName: bucket })
      }
      samples.push({ value: counts.count, labels: { le: "+Inf" }, sharedLabels, metricName: bucket })
      samples.push({ value: counts.sum, labels: {}, sharedLabels, metricName: `${this.metricName}_sum` })
      samples.push({ value: counts.count, labels: {}, sharedLabels, metricName: `${this.metricName}_count` })
    }
    return samples
  }
}
