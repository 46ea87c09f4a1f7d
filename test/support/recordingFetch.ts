/** A fetch that records each request's method and path before passing it on. */
export const recordingFetch = () => {
  const seen: Array<string> = []
  const fetchImpl: typeof fetch = (input, init) => {
    seen.push(`${init?.method ?? "GET"} ${new URL(String(input)).pathname}`)
    return fetch(input, init)
  }
  return { seen, fetchImpl }
}
