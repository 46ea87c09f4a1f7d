/**
 * Statements in standard SQL (DuckDB, Postgres) with one real `?` placeholder, bound to "seven",
 * and question marks inside quotes and comments that are text: what each engine must answer.
 */
export const PLACEHOLDER_VALUE = "seven"

export const STANDARD_PLACEHOLDER_CASES: ReadonlyArray<readonly [sql: string, row: Record<string, unknown>]> = [
  ["SELECT 'it''s ?' AS text, ? AS p", { text: "it's ?", p: "seven" }],
  // A backslash is an ordinary character in a standard string, so 'a\' ends there.
  [String.raw`SELECT 'a\' AS text, ? AS p`, { text: "a\\", p: "seven" }],
  [String.raw`SELECT E'it\'s ?' AS text, ? AS p`, { text: "it's ?", p: "seven" }],
  ["SELECT ? AS p -- is this ? a placeholder\n, 1 AS one", { p: "seven", one: 1 }],
  ["SELECT /* ? /* ? */ ? */ ? AS p", { p: "seven" }],
  ['SELECT 1 AS "odd?name", ? AS p, 2 AS "b""?"', { "odd?name": 1, p: "seven", 'b"?': 2 }],
  ["SELECT $$it's ?$$ AS text, $tag$ ? $$ ? $tag$ AS tagged, ? AS p", { text: "it's ?", tagged: " ? $$ ? ", p: "seven" }]
]
