export const DEFAULT_BASE_PATH = "/api/analytics"

/** `/api/` + `/x/` → `/api/x`: one slash between parts, none at the end. */
export const joinPath = (...parts: ReadonlyArray<string>): string => {
  const joined = parts.map((part) => part.replace(/^\/+|\/+$/g, "")).filter((part) => part.length > 0).join("/")
  return `/${joined}`
}
