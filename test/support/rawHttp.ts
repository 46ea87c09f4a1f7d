import { connect, type Socket } from "node:net"

/** A raw TCP connection to a loopback server, for what fetch cannot do: half-sent bodies, pipelining, watching the close. */
export interface RawConnection {
  write(text: string | Buffer): void
  /** Resolves with everything received once `predicate` holds for it (rejects after `timeoutMs`). */
  readUntil(predicate: (received: string) => boolean, timeoutMs?: number): Promise<string>
  /** Resolves when the server closed the connection. */
  readonly closed: Promise<void>
  destroy(): void
}

export const openConnection = (port: number): Promise<RawConnection> =>
  new Promise((resolve, reject) => {
    const socket: Socket = connect(port, "127.0.0.1")
    let received = ""
    const waiters = new Set<() => void>()
    socket.setEncoding("latin1")
    socket.on("data", (chunk: string) => {
      received += chunk
      for (const wake of waiters) wake()
    })
    // The server may reset a connection whose body it refused to read; the test looks at `closed`.
    socket.on("error", () => {})
    const closed = new Promise<void>((done) => socket.once("close", () => done()))
    socket.once("connect", () =>
      resolve({
        write: (text) => void socket.write(text),
        readUntil: (predicate, timeoutMs = 5_000) =>
          new Promise((done, fail) => {
            const check = (): void => {
              if (!predicate(received)) return
              waiters.delete(check)
              clearTimeout(timer)
              done(received)
            }
            const timer = setTimeout(() => {
              waiters.delete(check)
              fail(new Error(`timed out; received so far: ${JSON.stringify(received.slice(0, 300))}`))
            }, timeoutMs)
            waiters.add(check)
            check()
          }),
        closed,
        destroy: () => socket.destroy()
      })
    )
    socket.once("error", reject)
  })

/** Number of complete HTTP responses (by status line) in a raw capture. */
export const statusLines = (received: string): Array<string> => received.match(/HTTP\/1\.1 \d{3}[^\r]*/g) ?? []
