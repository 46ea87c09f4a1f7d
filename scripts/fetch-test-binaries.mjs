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

// The stable miniflare (what `wrangler dev` runs), whose workerd is older than the newest one above and
// refuses more at a Worker's global scope. Installed in a directory of its own: beside the newest
// workerd, npm would nest its workerd somewhere inside miniflare's folder.
export const STABLE_MINIFLARE = { miniflare: "4.20260730.0" }
export const STABLE_MINIFLARE_DIR = "stable-miniflare"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const dir = join(root, ".cache", "test-binaries")

/** Installs `packages` into `into`, unless its stamp says they are there; `after` completes the install. */
const install = (into, packages, label, after = () => {}) => {
  const stamp = join(into, "installed.json")
  const wanted = JSON.stringify(packages)
  if (existsSync(stamp) && readFileSync(stamp, "utf8") === wanted) return console.log(`[test-binaries] ${label}: up to date in ${into}`)
  mkdirSync(into, { recursive: true })
  writeFileSync(join(into, "package.json"), JSON.stringify({ name: "queryserve-test-binaries", private: true }) + "\n")
  const specs = Object.entries(packages).filter(([name]) => name !== "@oven/bun-linux-x64").map(([name, version]) => `${name}@${version}`)
  console.log(`[test-binaries] ${label}: installing ${specs.join(", ")} into ${into}`)
  const started = Date.now()
  execFileSync("npm", ["install", "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--loglevel=error", ...specs], {
    cwd: into,
    stdio: "inherit"
  })
  after()
  writeFileSync(stamp, wanted)
  console.log(`[test-binaries] ${label}: done in ${((Date.now() - started) / 1000).toFixed(1)} s`)
}

// npm installs @oven/bun-linux-x64 without its one binary (bin/bun); its tarball has it, so it is unpacked by hand.
const unpackBun = () => {
  const bunDir = join(dir, "node_modules", "@oven", "bun-linux-x64")
  mkdirSync(bunDir, { recursive: true })
  const tarball = execFileSync("npm", ["pack", "--silent", `@oven/bun-linux-x64@${BUN_VERSION}`], { cwd: dir, encoding: "utf8" }).trim()
  execFileSync("tar", ["xzf", tarball, "-C", bunDir, "--strip-components=1"], { cwd: dir })
  rmSync(join(dir, tarball))
}

install(dir, { ...PACKAGES, "@oven/bun-linux-x64": BUN_VERSION }, "runtimes and engines (about 1 GB; once per machine)", unpackBun)
install(join(dir, STABLE_MINIFLARE_DIR), STABLE_MINIFLARE, "stable miniflare (its workerd)")
