/** A reader of the Prometheus text format (version 0.0.4), enough to check what a scrape says. */

export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

export interface Exposition {
  /** `# TYPE` of each metric family. */
  readonly types: ReadonlyMap<string, string>
  readonly samples: ReadonlyArray<Sample>
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g

const unescape = (value: string): string => value.replace(/\\(["\\n])/g, (_, c: string) => (c === "n" ? "\n" : c))

const parseValue = (text: string): number =>
  text === "+Inf" ? Infinity : text === "-Inf" ? -Infinity : text === "NaN" || text === "Nan" ? Number.NaN : Number(text)

/** Throws on a line that is neither a comment nor a sample: a malformed scrape fails the test. */
export const parseExposition = (text: string): Exposition => {
  const types = new Map<string, string>()
  const samples: Array<Sample> = []
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue
    if (line.startsWith("#")) {
      const type = /^# TYPE (\S+) (\S+)$/.exec(line)
      if (type !== null) types.set(type[1]!, type[2]!)
      continue
    }
    const match = SAMPLE.exec(line)
    if (match === null) throw new Error(`not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const [, name, value] of (match[2] ?? "").matchAll(LABEL)) labels[name!] = unescape(value!)
    samples.push({ name: match[1]!, labels, value: parseValue(match[3]!) })
  }
  return { types, samples }
}

const sameLabels = (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean => {
  const keys = Object.keys(a)
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key])
}

/** The value of the sample with exactly these labels, or undefined when there is none. */
export const valueOf = (exposition: Exposition, name: string, labels: Readonly<Record<string, string>> = {}): number | undefined =>
  exposition.samples.find((sample) => sample.name === name && sameLabels(sample.labels, labels))?.value

/** Every sample of one name. */
export const samplesOf = (exposition: Exposition, name: string): ReadonlyArray<Sample> =>
  exposition.samples.filter((sample) => sample.name === name)
