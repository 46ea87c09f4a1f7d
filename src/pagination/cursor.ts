/**
 * Page cursors: opaque text that carries the offset of the next page and is bound to the rest of
 * the query (every input but `limit`, which may change between pages, and the cursor itself).
 *
 * The binding is an unkeyed SHA-256 over the offset and the canonical text of those inputs. It is
 * not a signature: it detects a cursor that was altered or is used with other inputs, and needs no
 * secret shared by the processes of a deployment. Forging one on purpose would only choose an
 * offset, which paging reaches anyway; a cursor never widens what the caller may read.
 */
import * as Either from "effect/Either"
import { sha256Digest } from "../domain/digest.js"
import { ValidationError } from "../domain/errors.js"

/** Separates these digests from every other queryserve takes over the same text. */
const DOMAIN = "queryserve:cursor:v1"

/** 22 base64url characters: 132 bits of the digest. */
const TAG_LENGTH = 22

const CURSOR = /^([0-9a-z]{1,11})\.([A-Za-z0-9_-]{22})$/

const tagOf = (offset: number, binding: string): string =>
  sha256Digest().base64url(`${DOMAIN}\n${offset}\n${binding}`).slice(0, TAG_LENGTH)

/** The cursor of the page at `offset` of the query whose other inputs' canonical text is `binding`. */
export const encodeCursor = (offset: number, binding: string): string => {
  if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError(`a cursor offset is an integer ≥ 0, not ${offset}`)
  return `${offset.toString(36)}.${tagOf(offset, binding)}`
}

const refused = (message: string): ValidationError =>
  new ValidationError({ message: "Invalid cursor", issues: [{ path: ["cursor"], message }] })

/**
 * The offset `cursor` carries, when `encodeCursor` gave it for this `binding`; else a ValidationError
 * on the path `["cursor"]`.
 */
export const decodeCursor = (cursor: unknown, binding: string): Either.Either<number, ValidationError> => {
  if (typeof cursor !== "string") return Either.left(refused("expected the text of page.nextCursor"))
  const match = CURSOR.exec(cursor)
  const offset = match === null ? NaN : parseInt(match[1]!, 36)
  if (match === null || !Number.isSafeInteger(offset) || tagOf(offset, binding) !== match[2]) {
    return Either.left(
      refused("is not a cursor of this query: it was altered, or the query's other inputs changed; start again without a cursor")
    )
  }
  return Either.right(offset)
}
