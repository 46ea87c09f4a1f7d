#!/usr/bin/env node
// Installs the test-only runtimes and engines (Bun, Deno, workerd, chDB, the MCP Inspector CLI, the MCP
// conformance suite) from npm into .cache/test-binaries. They weigh about a gigabyte together, so they are not devDependencies: a
// newcomer's `npm ci` stays light, and the tests that need one skip with a printed reason until this ran.
// CI (.ci/run) runs it before `npm test`. Versions are pinned here; bump them together with the tests.
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

export const PACKAGES = {
  deno: "2.9.6",
  "@deno/linux-x64-glibc": "2.9.6",
  workerd: "1.20261117.1",
  "@cloudflare/workerd-linux-64": "1.20261117.1",
  chdb: "3.4.0",
  "@modelcontextprotocol/inspector-cli": "1.0.3",
  "@modelcontextprotocol/conformance": "0.1.16"
}

const BUN_VERSION = "1.4.5"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const dir = join(root, ".cache", "test-binaries")
const stamp = join(dir, "installed.json")
const wanted = JSON.stringify({ ...PACKAGES, "@oven/bun-linux-x64": BUN_VERSION })

if (existsSync(stamp) && readFileSync(stamp, "utf8") === wanted) {
  console.log(`[test-binaries] up to date in ${dir}`)
} else {
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "queryserve-test-binaries", private: true }) + "\n")
  const specs = Object.entries(PACKAGES).map(([name, version]) => `${name}@${version}`)
  console.log(`[test-binaries] installing ${specs.join(", ")} into ${dir} (about 1 GB; once per machine)`)
  const started = Date.now()
  execFileSync("npm", ["install", "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--loglevel=error", ...specs], {
    cwd: dir,
    stdio: "inherit"
  })
  // npm installs @oven/bun-linux-x64 without its one binary (bin/bun); its tarball has it, so it is unpacked by hand.
  const bunDir = join(dir, "node_modules", "@oven", "bun-linux-x64")
  mkdirSync(bunDir, { recursive: true })
  const tarball = execFileSync("npm", ["pack", "--silent", `@oven/bun-linux-x64@${BUN_VERSION}`], { cwd: dir, encoding: "utf8" }).trim()
  execFileSync("tar", ["xzf", tarball, "-C", bunDir, "--strip-components=1"], { cwd: dir })
  rmSync(join(dir, tarball))
  writeFileSync(stamp, wanted)
  console.log(`[test-binaries] done in ${((Date.now() - started) / 1000).toFixed(1)} s`)
}
