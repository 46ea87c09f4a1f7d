import { writeFileSync } from "node:fs"
import { join, relative } from "node:path"
import type { WorkerBundle } from "../../../examples/worker/build.js"
import { type RuntimeProcess, startRuntime } from "./runtimeProcess.js"

export interface WorkerdService {
  readonly name: string
  /** Bundled into a subdirectory of the config's directory. */
  readonly bundle: WorkerBundle
  readonly port: number
  /** Text bindings (the Worker's `env`). */
  readonly bindings?: Readonly<Record<string, string>>
}

// No compatibility flags: in particular no `nodejs_compat`, so a `node:` import would fail to load.
const COMPATIBILITY_DATE = "2025-09-01"

const capnpString = (text: string): string => JSON.stringify(text)

/** A workerd config serving each bundle, every module of it listed by its path inside the bundle. */
const config = (directory: string, services: ReadonlyArray<WorkerdService>): string => {
  const workers = services.map((service) => {
    const modules = service.bundle.files.map((file) =>
      `(name = ${capnpString(file)}, esModule = embed ${capnpString(relative(directory, join(service.bundle.outdir, file)))})`
    )
    const bindings = Object.entries(service.bindings ?? {}).map(([name, text]) => `(name = ${capnpString(name)}, text = ${capnpString(text)})`)
    return `const ${service.name} :Workerd.Worker = (
  modules = [ ${modules.join(", ")} ],
  bindings = [ ${bindings.join(", ")} ],
  compatibilityDate = "${COMPATIBILITY_DATE}"
);`
  })
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ ${services.map((s) => `(name = "${s.name}", worker = .${s.name})`).join(", ")} ],
  sockets = [ ${services.map((s) => `(name = "${s.name}", address = "127.0.0.1:${s.port}", http = (), service = "${s.name}")`).join(", ")} ]
);
${workers.join("\n")}
`
}

/** Runs workerd with one socket per service; resolves once the first answers at `readyPath`. */
export const startWorkerd = (
  binary: string,
  directory: string,
  services: ReadonlyArray<WorkerdService>,
  readyPath: string
): Promise<RuntimeProcess> => {
  const file = join(directory, "config.capnp")
  writeFileSync(file, config(directory, services))
  return startRuntime(binary, ["serve", file, "--verbose"], {
    cwd: directory,
    readyUrl: `http://127.0.0.1:${services[0]!.port}${readyPath}`
  })
}
