/** The hooks one caller's part of the page uses: made per API key, so no key ever reads another's cache. */
import { createHooks } from "queryserve/react"
import type { AnalyticsApi } from "../api.js"
import { API_KEY_HEADER, DEMO_BASE_PATH } from "../demoKeys.js"

export const hooksFor = (apiKey: string) =>
  // Only the dataset route is asked, always a POST: the OpenAPI document is never needed for methods.
  createHooks<AnalyticsApi>({ baseUrl: DEMO_BASE_PATH, headers: { [API_KEY_HEADER]: apiKey } })

export type DemoHooks = ReturnType<typeof hooksFor>
