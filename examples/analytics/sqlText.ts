/**
 * Where the `?` placeholders of a statement are. A `?` inside a string literal, a quoted
 * identifier or a comment is text, not a parameter, and what counts as quoted or commented out
 * depends on the database: `'it\'s ?'` is one string in ClickHouse, but in DuckDB and Postgres
 * it is the string `'it\'` followed by `s`, a placeholder and an unterminated string.
 */

/** The lexical rules that decide which characters are quoted or commented out. */
export interface SqlDialect {
  readonly name: "standard" | "clickhouse"
  /** A backslash escapes the next character inside any quotes. Standard SQL has it only in `E'...'`. */
  readonly backslashEscapes: boolean
  /** `` `name` `` quotes an identifier. */
  readonly backquotes: boolean
  /** `# ` and `#!` start a line comment. */
  readonly hashComments: boolean
  /** Characters allowed in the tag of `$tag$...$tag$`: standard SQL's tag cannot start with a digit. */
  readonly dollarTag: RegExp
}

/**
 * DuckDB and Postgres: `'...'` and `"..."` (a doubled quote stands for itself), `E'...'` with
 * backslash escapes, `$tag$...$tag$`, `--` line comments and nested block comments.
 */
export const STANDARD_SQL: SqlDialect = {
  name: "standard",
  backslashEscapes: false,
  backquotes: false,
  hashComments: false,
  dollarTag: /\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/y
}

/**
 * ClickHouse: as standard SQL, but a backslash escapes inside every kind of quotes, backquotes
 * quote identifiers, and `# ` or `#!` start a line comment. ClickHouse reads a bare `?` as its
 * ternary operator: with placeholders, write `if(c, a, b)` instead.
 */
export const CLICKHOUSE_SQL: SqlDialect = {
  name: "clickhouse",
  backslashEscapes: true,
  backquotes: true,
  hashComments: true,
  dollarTag: /\$[A-Za-z0-9_]*\$/y
}

const UNTERMINATED = -1

/** The index after the quote closing the one at `start`, or UNTERMINATED. */
const quoteEnd = (sql: string, start: number, backslash: boolean): number => {
  const quote = sql[start]
  for (let i = start + 1; i < sql.length; i++) {
    const c = sql[i]
    if (c === "\\" && backslash) i++
    else if (c === quote) {
      if (sql[i + 1] !== quote) return i + 1
      i++
    }
  }
  return UNTERMINATED
}

/** Block comments nest in all three databases: `/* a /* b *\/ c *\/` is one comment. */
const blockCommentEnd = (sql: string, start: number): number => {
  let depth = 0
  for (let i = start; i < sql.length - 1; i++) {
    const pair = sql[i]! + sql[i + 1]!
    if (pair === "/*") depth++
    else if (pair === "*/") depth--
    else continue
    i++
    if (depth === 0) return i + 1
  }
  return UNTERMINATED
}

/** Reaching the end of the text inside a line comment counts as unterminated: appended SQL would be commented out. */
const lineCommentEnd = (sql: string, start: number): number => {
  const newline = sql.indexOf("\n", start)
  return newline === -1 ? UNTERMINATED : newline + 1
}

const WORD = /[A-Za-z0-9_$]/

/**
 * The index after the quoted text or comment starting at `i`; `i + 1` when none starts there.
 * A `$` that opens no closed `$tag$...$tag$` is an ordinary character, as ClickHouse reads it.
 */
const skip = (sql: string, i: number, dialect: SqlDialect): number => {
  const c = sql[i]!
  const next = sql[i + 1]
  switch (c) {
    case "'":
      // E'...' takes backslash escapes in standard SQL too.
      return quoteEnd(sql, i, dialect.backslashEscapes || (/[Ee]/.test(sql[i - 1] ?? "") && !WORD.test(sql[i - 2] ?? "")))
    case '"':
      return quoteEnd(sql, i, dialect.backslashEscapes)
    case "`":
      return dialect.backquotes ? quoteEnd(sql, i, true) : i + 1
    case "-":
      return next === "-" ? lineCommentEnd(sql, i) : i + 1
    case "#":
      return dialect.hashComments && (next === " " || next === "!") ? lineCommentEnd(sql, i) : i + 1
    case "/":
      return next === "*" ? blockCommentEnd(sql, i) : i + 1
    case "$": {
      if (WORD.test(sql[i - 1] ?? "")) return i + 1 // inside a name such as a$b
      dialect.dollarTag.lastIndex = i
      const tag = dialect.dollarTag.exec(sql)?.[0]
      const close = tag === undefined ? -1 : sql.indexOf(tag, i + tag.length)
      return close === -1 ? i + 1 : close + tag!.length
    }
    default:
      return i + 1
  }
}

export interface PlaceholderScan {
  /** Offsets of the `?` placeholders. */
  readonly offsets: ReadonlyArray<number>
  /** False when the text ends inside quotes or a comment, which would swallow any SQL appended to it. */
  readonly closed: boolean
  /**
   * False when a `)` outside quotes and comments has no `(` before it, or a `(` stays open: such
   * text could close a parenthesis written around it, or pull the SQL after it inside its own.
   */
  readonly balanced: boolean
}

export const scanPlaceholders = (sql: string, dialect: SqlDialect): PlaceholderScan => {
  const offsets: Array<number> = []
  let depth = 0
  let lowest = 0
  let i = 0
  while (i < sql.length) {
    const c = sql[i]
    if (c === "?") offsets.push(i)
    else if (c === "(") depth++
    else if (c === ")") lowest = Math.min(lowest, --depth)
    else {
      const end = skip(sql, i, dialect)
      if (end === UNTERMINATED) return { offsets, closed: false, balanced: false }
      i = end
      continue
    }
    i++
  }
  return { offsets, closed: true, balanced: depth === 0 && lowest === 0 }
}

/**
 * Replaces the `?` placeholders of `sql` by `render(0)`, `render(1)`, ... for a database that
 * spells parameters differently (Postgres `$1`, ClickHouse `{p0:String}`). Throws when their
 * number is not `count`: a value would be bound to the wrong place.
 */
export const renderPlaceholders = (sql: string, dialect: SqlDialect, count: number, render: (index: number) => string): string => {
  const { offsets } = scanPlaceholders(sql, dialect)
  if (offsets.length !== count) {
    throw new Error(`SQL has ${offsets.length} placeholder(s) for ${count} value(s) in ${dialect.name} SQL: ${sql}`)
  }
  let out = ""
  let from = 0
  offsets.forEach((offset, index) => {
    out += sql.slice(from, offset) + render(index)
    from = offset + 1
  })
  return out + sql.slice(from)
}
