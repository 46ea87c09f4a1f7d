/** Debian's chromium, headless, through playwright-core: no browser download, nothing but loopback. */
import { existsSync } from "node:fs"
import { chromium } from "playwright-core"
import { missing } from "./testBinaries.js"

const CHROMIUM = "/usr/bin/chromium"

/** The browser's path, or undefined (and why, printed; in CI a failure) when it is not installed. */
export const findChromium = (suite: string): string | undefined =>
  existsSync(CHROMIUM) ? CHROMIUM : missing(`${suite}: ${CHROMIUM} is missing (apt-get install chromium)`)

/** A headless browser with a profile in `userDataDir` and Chromium's own background traffic turned off. */
export const launchChromium = (executablePath: string, userDataDir: string) =>
  chromium.launchPersistentContext(userDataDir, {
    executablePath,
    headless: true,
    viewport: { width: 1200, height: 900 },
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })
