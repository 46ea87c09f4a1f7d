/**
 * Names a caller was granted (roles, scopes), however a strategy or token gave them: an array keeps
 * its strings, a string is a space-separated list (OAuth's `scope`), anything else grants nothing.
 * A bare string is never searched as text: `"nonadmin"` does not contain the role `admin`.
 */
export const nameList = (value: unknown): ReadonlyArray<string> => {
  if (typeof value === "string") return value.split(/\s+/).filter((name) => name.length > 0)
  if (Array.isArray(value)) return value.filter((name): name is string => typeof name === "string")
  return []
}
