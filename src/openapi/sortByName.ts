/** A copy of `record` with its keys in sorted order, so documents serialize deterministically. */
export const sortByName = <A>(record: Readonly<Record<string, A>>): Record<string, A> => {
  const sorted: Record<string, A> = {}
  for (const name of Object.keys(record).sort()) sorted[name] = record[name]!
  return sorted
}
