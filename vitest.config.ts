import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

export default defineConfig({
  resolve: {
    // `queryserve/web` is the web build (test/runtimes/webBuild.test.ts); `queryserve` the Node entry.
    alias: [
      { find: /^queryserve\/react$/, replacement: fileURLToPath(new URL("./src/react/index.ts", import.meta.url)) },
      { find: /^queryserve\/web$/, replacement: fileURLToPath(new URL("./src/index.web.ts", import.meta.url)) },
      { find: /^queryserve$/, replacement: fileURLToPath(new URL("./src/index.ts", import.meta.url)) }
    ]
  },
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/reliability/**"],
    // Vitest runs one file at a time on two cores (cores - 1); many files mostly wait (servers,
    // browsers, deadlines), so two at a time finish the suite in much less wall time.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
