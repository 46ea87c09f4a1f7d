/**
 * The demo's dashboard, bundled by ./assets.ts for the browser: pick a demo key, see that caller's
 * tenant. Everything under one key (its hooks and its QueryClient) is made again when the key
 * changes, so one tenant's answers are never shown to, or cached for, another.
 */
import { QueryClient, QueryClientProvider } from "@tanstack/react-query"
import { createElement as h, StrictMode, useState } from "react"
import { createRoot } from "react-dom/client"
import { DEMO_API_KEYS } from "../demoKeys.js"
import { TenantCharts } from "./charts.js"
import { hooksFor } from "./hooks.js"

/** A key the server does not know, to see how the page shows a 401. */
const WRONG_KEY = "not-a-demo-key"

const KEY_CHOICES: ReadonlyArray<readonly [key: string, label: string]> = [
  ...Object.entries(DEMO_API_KEYS).map(([key, caller]) =>
    [key, `${caller.name} (${"tenantId" in caller ? `tenant ${caller.tenantId}` : "no tenant"})`] as const
  ),
  [WRONG_KEY, "A wrong key"]
]

const Tenant = ({ apiKey }: { readonly apiKey: string }) => {
  const [client] = useState(() => new QueryClient({ defaultOptions: { queries: { staleTime: 60_000, refetchOnWindowFocus: false } } }))
  const [hooks] = useState(() => hooksFor(apiKey))
  return h(QueryClientProvider, { client }, h(TenantCharts, { hooks }))
}

const Dashboard = () => {
  const [apiKey, setApiKey] = useState(KEY_CHOICES[0]![0])
  return h(
    "main",
    null,
    h(
      "header",
      null,
      h("h1", null, "Sales analytics"),
      h(
        "label",
        null,
        "API key ",
        h(
          "select",
          { value: apiKey, onChange: (event: { target: { value: string } }) => setApiKey(event.target.value), "data-testid": "api-key" },
          ...KEY_CHOICES.map(([key, label]) => h("option", { key, value: key }, `${label}: ${key}`))
        )
      )
    ),
    h(Tenant, { key: apiKey, apiKey })
  )
}

createRoot(document.getElementById("root")!).render(h(StrictMode, null, h(Dashboard)))
