import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

export default defineConfig({
  resolve: { alias: { queryserve: fileURLToPath(new URL("./src/index.ts", import.meta.url)) } },
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/reliability/**"],
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
