/**
 * The Worker example (examples/worker) bundled as for Cloudflare Workers: esbuild, the `workerd`,
 * `worker` and `browser` conditions, minified, code-split; `queryserve` is the built package, so its
 * export conditions choose the web build. Prints `result <json>` with the sizes in bytes.
 */
import { fileURLToPath } from "node:url";
import { bundleWorker } from "../../examples/worker/build.js";

const main = async (): Promise<void> => {
  const bundle = await bundleWorker({ outdir: fileURLToPath(new URL("../.build/worker/", import.meta.url)) });
  const { startupBytes, startupGzipBytes, totalBytes, docsChunkBytes } = bundle;
  process.stdout.write(`result ${JSON.stringify({ startupBytes, startupGzipBytes, totalBytes, docsChunkBytes, modules: bundle.files.length })}\n`);
};

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stdout.write(`fail ${(error instanceof Error ? error.message : String(error)).replace(/\s+/g, " ")}\n`);
    process.exit(1);
  },
);
