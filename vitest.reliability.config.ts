import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

/** The long reliability suite (`npm run test:reliability`); `npm test` runs short versions of the same checks. */
export default defineConfig({
  resolve: { alias: { queryserve: fileURLToPath(new URL("./src/index.ts", import.meta.url)) } },
  test: {
    include: ["test/reliability/**/*.test.ts"],
    passWithNoTests: true,
    testTimeout: 300_000,
    hookTimeout: 120_000,
    fileParallelism: false
  }
})
