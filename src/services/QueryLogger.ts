import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import { makeQueryLogger, type ServeQueryLogger } from "../stages/events.js"

export class QueryLogger extends Context.Tag("queryserve/QueryLogger")<QueryLogger, ServeQueryLogger>() {
  /** A fresh logger with no listeners. */
  static readonly layer: Layer.Layer<QueryLogger> = Layer.sync(QueryLogger, makeQueryLogger)
}
