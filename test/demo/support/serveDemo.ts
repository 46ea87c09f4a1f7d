import type { ServeQueryEvent } from "queryserve"
import { createAnalyticsApi } from "../../../examples/analytics/api.js"
import { createDb, type SqlDriver } from "../../../examples/analytics/sql.js"

/** The demo API over `driver` on a loopback port, its query events pushed to `events`; calls go to `${basePath}/name?...`. */
export const serveDemo = async (driver: SqlDriver, events: Array<ServeQueryEvent>, requestTimeout?: number) => {
  const api = createAnalyticsApi(createDb(driver), { queryLogging: (event) => void events.push(event) })
  const running = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false, ...(requestTimeout === undefined ? {} : { requestTimeout }) })
  return {
    call: (path: string, key: string, signal?: AbortSignal) =>
      fetch(`${running.url}${api.basePath}/${path}`, { headers: { "x-api-key": key }, signal }),
    stop: async () => {
      const stopped = running.stop()
      // fetch may keep a connection it opened and never sent on, which a graceful stop would wait out.
      running.server?.closeAllConnections()
      await stopped
      await api.dispose()
    }
  }
}
