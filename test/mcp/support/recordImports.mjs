// `node --import ./recordImports.mjs`: appends every module URL of @modelcontextprotocol/sdk the
// process resolves to the file named by RECORD_IMPORTS (the hooks run on their own thread).
import { register } from "node:module"

register("./recordImportsHooks.mjs", import.meta.url)
