import { appendFileSync } from "node:fs"

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context)
  if (resolved.url.includes("/@modelcontextprotocol/sdk/")) appendFileSync(process.env.RECORD_IMPORTS, `${resolved.url}\n`)
  return resolved
}
