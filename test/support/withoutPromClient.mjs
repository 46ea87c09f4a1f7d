// `node --import ./withoutPromClient.mjs`: a process in which `prom-client` cannot be found, as on a
// runtime without Node's modules.
import { register } from "node:module"

const hook = `export async function resolve(specifier, context, next) {
  if (specifier === "prom-client") throw Object.assign(new Error("Cannot find package 'prom-client'"), { code: "ERR_MODULE_NOT_FOUND" })
  return next(specifier, context)
}`
register(`data:text/javascript,${encodeURIComponent(hook)}`)
