import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const SRC = fileURLToPath(new URL("../../src/", import.meta.url))

/** The floors of src/ from the bottom up, as docs/concepts.md draws them: a folder imports from its own floor's folders or lower ones. */
const FLOORS: ReadonlyArray<ReadonlyArray<string>> = [
  ["domain"],
  ["openapi", "redis", "tenancy"],
  ["stages"],
  ["cache"],
  ["services"],
  ["layers", "metrics", "middleware", "auth", "mcp", "docs", "datasets", "pagination"],
  ["config"],
  ["pipeline"],
  ["adapters", "server", "facade", "client", "react"],
  ["."]
]

const floorOf = (folder: string): number => {
  const floor = FLOORS.findIndex((folders) => folders.includes(folder))
  if (floor === -1) throw new Error(`src/${folder} is on no floor: add it to FLOORS and to docs/concepts.md`)
  return floor
}

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : /\.tsx?$/.test(entry.name) ? [join(dir, entry.name)] : []
  )

const IMPORT = /(?:import|export)\s[^'"]*?from\s*["'](\.[^"']+)["']|import\(\s*["'](\.[^"']+)["']\s*\)/g

/** Each relative import of src/: importing file and imported file, relative to src/. */
const imports = (): Array<{ readonly from: string; readonly to: string }> =>
  sourceFiles(SRC).flatMap((file) =>
    [...readFileSync(file, "utf8").matchAll(IMPORT)].map((match) => ({
      from: relative(SRC, file),
      to: relative(SRC, resolve(dirname(file), (match[1] ?? match[2])!))
    }))
  )

const topFolder = (path: string): string => (path.includes("/") ? path.slice(0, path.indexOf("/")) : ".")

describe("the floors of src/", () => {
  it("no import runs from a floor to one above it", () => {
    const against = imports()
      .filter(({ from, to }) => floorOf(topFolder(to)) > floorOf(topFolder(from)))
      .map(({ from, to }) => `${from} -> ${to}`)
    expect(against).toEqual([])
  })

  it("no two folders of one floor import each other in a circle", () => {
    const edges = new Set(imports().map(({ from, to }) => `${topFolder(from)} ${topFolder(to)}`))
    const circles = [...edges].filter((edge) => {
      const [a, b] = edge.split(" ")
      return a !== b && edges.has(`${b} ${a}`)
    })
    expect(circles).toEqual([])
  })
})
