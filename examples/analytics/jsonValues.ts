/**
 * The JSON values the drivers give for types JSON has no exact match for, the same whichever
 * database serves an endpoint (docs/databases.md, "Values"):
 * - integers and decimals: a number when that number is the same value, else exact text;
 * - timestamps: 'YYYY-MM-DD HH:MM:SS[.ffffff]', the wall clock, in no time zone;
 * - timestamps with a time zone: the instant in UTC, ISO 8601: 'YYYY-MM-DDTHH:MM:SS[.ffffff]Z';
 * - NaN and ±Infinity: null.
 */

const PLAIN_DECIMAL = /^-?\d+(\.\d+)?$/
const NUMBER_TEXT = /^(-?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/

/** The significant digits and power of ten of a number's text: '1.50', '15e-1' and '1.5' all give '15e-1'. */
const scientific = (text: string): string => {
  const [, sign = "", whole = "", fraction = "", exponent = "0"] = NUMBER_TEXT.exec(text) ?? []
  const digits = `${whole}${fraction}`.replace(/^0+/, "")
  const significant = digits.replace(/0+$/, "")
  if (significant === "") return "0"
  return `${sign}${significant}e${Number(exponent) - fraction.length + digits.length - significant.length}`
}

/**
 * An integer or decimal from the exact text its database prints. A number when JSON would write
 * that number as the same value ('10.50' → 10.5, '0.1' → 0.1, 10^22); otherwise, past a double's
 * 15 to 17 digits, the exact text without trailing zeros ('9007199254740993',
 * '12345678901234567.8'). NaN and ±Infinity (Postgres' numeric has them) are null.
 */
export const exactNumber = (text: string): number | string | null => {
  if (!PLAIN_DECIMAL.test(text)) return null
  const number = Number(text)
  // Up to 15 digits a decimal always reads back from its double: only longer ones need comparing.
  if (text.length <= 15 || scientific(String(number)) === scientific(text)) return number
  return text.includes(".") ? text.replace(/\.?0+$/, "") : text
}

/** A 64- or 128-bit integer: a number when it is exactly one, else its digits (exactNumber without the text). */
export const exactInteger = (value: bigint): number | string => {
  const number = Number(value)
  return Number.isSafeInteger(number) || BigInt(number) === value ? number : String(value)
}

/** A double, or null where JSON has no number for it (NaN, ±Infinity). */
export const finiteOrNull = (value: number): number | null => (Number.isFinite(value) ? value : null)

const WALL_CLOCK = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?$/

/** A UTC wall-clock time 'YYYY-MM-DD HH:MM:SS[.f]' as its instant, '...T...Z'; 'infinity' and BC dates stay as printed. */
export const utcInstant = (wallClock: string): string => (WALL_CLOCK.test(wallClock) ? `${wallClock.replace(" ", "T")}Z` : wallClock)

/** A timestamp's fraction of a second without trailing zeros, as DuckDB and Postgres print it ('.120' → '.12', '.000' → ''). */
export const withoutTrailingZeros = (timestamp: string): string =>
  timestamp.replace(/\.(\d*?)0+$/, (_, digits: string) => (digits === "" ? "" : `.${digits}`))
