/**
 * The read guard of the DuckDB driver. It walks DuckDB's own parse tree of hand-written SQL
 * (`json_serialize_sql`) and lets the SQL run only when every table it names is a name it may
 * read. It fails closed: a statement that is not one SELECT, a table function, a qualified name,
 * or any node of the tree it does not know is refused with SqlGuardError.
 *
 * It replaces `getTableNames()`, which lists no table at all for `JOIN ... USING`, NATURAL and
 * ASOF joins, or PIVOT, so such SQL read base tables unchecked.
 */
import type { DuckDBConnection } from "@duckdb/node-api"
import { type Json, type ReadCheck, SqlGuardError } from "./sql.js"

type TreeObject = { readonly [key: string]: Json }

/**
 * Node types that read no table themselves (what they contain is walked): queries, joins,
 * subqueries, VALUES, a missing FROM, and a query's modifiers and sort orders. Every other type
 * outside expressions is refused: a table function (read_csv, glob, query_table, range...),
 * PIVOT/UNPIVOT, DESCRIBE/SUMMARIZE, a recursive CTE, or one a later DuckDB adds.
 */
const READS_NOTHING_ITSELF: ReadonlySet<string> = new Set([
  "SELECT_NODE",
  "SET_OPERATION_NODE",
  "JOIN",
  "SUBQUERY",
  "EXPRESSION_LIST",
  "EMPTY",
  "ORDER_MODIFIER",
  "LIMIT_MODIFIER",
  "LIMIT_PERCENT_MODIFIER",
  "DISTINCT_MODIFIER",
  "ORDER_DEFAULT",
  "ASCENDING",
  "DESCENDING"
])

/** The parameters of a CAST's type, such as DECIMAL(10, 2): no reads. */
const TYPE_INFO = /_TYPE_INFO$/

const isList = (node: Json): node is ReadonlyArray<Json> => Array.isArray(node)

const isObject = (node: Json): node is TreeObject => typeof node === "object" && node !== null && !isList(node)

/** The parse tree of `sql`, as DuckDB gives it. */
const parseTree = async (connection: DuckDBConnection, sql: string): Promise<Json> => {
  const reader = await connection.runAndReadAll("SELECT json_serialize_sql($1::VARCHAR)", [sql])
  return JSON.parse(String(reader.getRows()[0]?.[0])) as Json
}

/** The one SELECT statement of a parse tree; anything else is refused. */
const onlyStatement = (tree: Json, sql: string): Json => {
  if (!isObject(tree) || tree.error !== false) {
    // json_serialize_sql serializes SELECT statements only: SET, PRAGMA, ATTACH, COPY... end here.
    const reason = isObject(tree) ? String(tree.error_message) : "no parse tree"
    throw new SqlGuardError(`DuckDB cannot show what this SQL reads (${reason}): ${sql}`)
  }
  const statements = tree.statements ?? null
  if (!isList(statements) || statements.length !== 1) throw new SqlGuardError(`Expected one SQL statement: ${sql}`)
  return statements[0] ?? null
}

/**
 * A table named in the SQL is allowed when it is unqualified and a visible name, spelled exactly
 * as the key: ClickHouse matches names case-sensitively, so `Orders` is not the key `orders`.
 */
const tableRead = (table: TreeObject, visible: ReadonlySet<string>): string | undefined => {
  const { catalog_name: catalog, schema_name: schema, table_name: name } = table
  // A qualified name (main.orders) is the base table even where a key of that name is visible.
  if (catalog === "" && schema === "" && typeof name === "string" && visible.has(name)) return undefined
  return `table "${[catalog, schema, name].filter((part) => typeof part === "string" && part !== "").join(".")}"`
}

/** What a node reads by itself, not counting what it contains; undefined when nothing forbidden. */
const ownRead = (node: TreeObject, visible: ReadonlySet<string>): string | undefined => {
  // Expressions read tables only through the subqueries they contain.
  if ("class" in node) return undefined
  const { type } = node
  if (typeof type !== "string" || READS_NOTHING_ITSELF.has(type) || TYPE_INFO.test(type)) return undefined
  return type === "BASE_TABLE" ? tableRead(node, visible) : `a ${type} node`
}

interface CteDefinition {
  readonly name: string
  readonly query: Json
}

/** A query's own CTEs in the order written, or undefined when the tree is not shaped as expected. */
const cteDefinitions = (cteMap: Json): ReadonlyArray<CteDefinition> | undefined => {
  const entries = isObject(cteMap) ? (cteMap.map ?? null) : null
  if (!isList(entries)) return undefined
  const definitions: Array<CteDefinition> = []
  for (const entry of entries) {
    if (!isObject(entry) || typeof entry.key !== "string") return undefined
    definitions.push({ name: entry.key, query: entry.value ?? null })
  }
  return definitions
}

/**
 * A CTE sees the names visible around its query and the CTEs before it, not itself (a
 * non-recursive CTE's own name is the table it shadows); the rest of the query sees them all.
 */
const readsWithCtes = (node: TreeObject, visible: ReadonlySet<string>): string | undefined => {
  const { cte_map: cteMap = null, ...query } = node
  const definitions = cteDefinitions(cteMap)
  if (definitions === undefined) return "a WITH clause the guard cannot read"
  const inScope = new Set(visible)
  for (const { name, query: definition } of definitions) {
    const read = forbiddenRead(definition, inScope)
    if (read !== undefined) return read
    inScope.add(name)
  }
  return forbiddenRead(query, inScope)
}

/** The first thing `node` reads that is not a name in `visible`, or undefined when there is none. */
const forbiddenRead = (node: Json, visible: ReadonlySet<string>): string | undefined => {
  if (isList(node)) return firstForbiddenRead(node, visible)
  if (!isObject(node)) return undefined
  if ("cte_map" in node) return readsWithCtes(node, visible)
  return ownRead(node, visible) ?? firstForbiddenRead(Object.values(node), visible)
}

const firstForbiddenRead = (nodes: ReadonlyArray<Json>, visible: ReadonlySet<string>): string | undefined => {
  for (const node of nodes) {
    const read = forbiddenRead(node, visible)
    if (read !== undefined) return read
  }
  return undefined
}

/** Throws SqlGuardError unless `sql` is one SELECT that reads no table but the names in `allowed`. */
/**
 * SQL texts already approved, with the names they were allowed: a verdict depends on nothing else
 * (the tree, not the database), and a parse costs about a millisecond, which every request of a
 * metric would pay again. A metric's SQL is fixed text (values are bound), so few are ever kept.
 */
const approved = new Set<string>()
const MAX_APPROVED = 1_000

export const assertReadsOnly = async (connection: DuckDBConnection, { sql, allowed }: ReadCheck): Promise<void> => {
  const verdictKey = `${[...allowed].sort().join(",")}\n${sql}`
  if (approved.has(verdictKey)) return
  const statement = onlyStatement(await parseTree(connection, sql), sql)
  const read = forbiddenRead(statement, allowed)
  if (read !== undefined) {
    throw new SqlGuardError(
      `SQL reads ${read}, not only db.with() keys; read tables through db.table() builders passed as db.with() sources: ${sql}`
    )
  }
  if (approved.size >= MAX_APPROVED) approved.clear()
  approved.add(verdictKey)
}
