#!/usr/bin/env node
/**
 * Runs @hypequery/serve's own serve tests against queryserve and prints each test's result:
 *
 *   HYPEQUERY_TESTS=/path/to/their/packages/serve/src npm run test:hypequery
 *
 * The directory's files are copied (with their folders) to .cache/hypequery-compat/, which git
 * ignores: their code never enters this repository. scripts/hypequery-compat.config.mjs resolves
 * their imports of the package to queryserve. Exits 0 whatever the results: the failures are read
 * against docs/migrating-from-hypequery.md, not judged here.
 */
import { spawnSync } from "node:child_process"
import { cpSync, existsSync, readFileSync, rmSync, statSync } from "node:fs"
import { relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const repo = fileURLToPath(new URL("..", import.meta.url))
const source = process.env.HYPEQUERY_TESTS ?? process.argv[2]
if (source === undefined || !existsSync(source) || !statSync(source).isDirectory()) {
  console.error("Set HYPEQUERY_TESTS to a directory holding @hypequery/serve's test files (its packages/serve/src, or a part of it).")
  process.exit(2)
}

const copies = resolve(repo, ".cache/hypequery-compat")
rmSync(copies, { recursive: true, force: true })
cpSync(resolve(source), copies, { recursive: true, filter: (path) => statSync(path).isDirectory() || path.endsWith(".ts") })

const report = resolve(repo, ".cache/hypequery-compat-report.json")
const run = spawnSync(
  process.execPath,
  [resolve(repo, "node_modules/vitest/vitest.mjs"), "run", "--config", "scripts/hypequery-compat.config.mjs", "--reporter=json", `--outputFile=${report}`],
  { cwd: repo, stdio: ["ignore", "ignore", "inherit"] }
)
if (!existsSync(report)) {
  console.error(`vitest wrote no report (exit ${run.status})`)
  process.exit(1)
}

const { testResults } = JSON.parse(readFileSync(report, "utf8"))
let passed = 0
let total = 0
for (const file of testResults) {
  const name = relative(copies, file.name)
  // A file that fails before its tests run (an import queryserve does not have) has no assertion results.
  if (file.assertionResults.length === 0) console.log(`FILE FAILED ${name}: ${firstLine(file.message)}`)
  for (const test of file.assertionResults) {
    if (test.status === "skipped" || test.status === "pending" || test.status === "todo") continue
    total++
    if (test.status === "passed") passed++
    const why = test.status === "passed" ? "" : ` -- ${firstLine(test.failureMessages?.[0])}`
    console.log(`${test.status === "passed" ? "PASS" : "FAIL"} ${name} > ${test.fullName}${why}`)
  }
}
console.log(`\n${passed} of ${total} tests pass, ${total - passed} fail (${testResults.length} files)`)

function firstLine(text) {
  return String(text ?? "").split("\n").find((line) => line.trim() !== "")?.trim().slice(0, 200) ?? ""
}
