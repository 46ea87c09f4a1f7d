/**
 * The names a dataset model may use for its source, columns and fields. Only plain identifiers ever
 * reach SQL (quoted all the same), so no name from a model can change what a statement means.
 */

const PLAIN_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/

/**
 * The longest name: Postgres cuts identifiers at 63 bytes, and a time field's alias adds its grain
 * (`.quarter`, 8 characters), which must survive whole since rows are keyed by it.
 */
export const MAX_IDENTIFIER_LENGTH = 55

export const isPlainIdentifier = (value: unknown): value is string =>
  typeof value === "string" && value.length <= MAX_IDENTIFIER_LENGTH && PLAIN_IDENTIFIER.test(value)

/** Throws the define-time error when `value` is not a plain identifier; `what` names it in the message. */
export const checkIdentifier = (dataset: string, what: string, value: unknown): string => {
  if (isPlainIdentifier(value)) return value
  throw new Error(
    `dataset ${JSON.stringify(dataset)}: ${what} must be a plain SQL identifier (a letter or _, then letters, ` +
      `digits or _, at most ${MAX_IDENTIFIER_LENGTH} characters), not ${JSON.stringify(value)}`
  )
}
