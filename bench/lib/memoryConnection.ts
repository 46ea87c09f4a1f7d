/**
 * node:http without sockets, for the loop tasks (listenerLoop, cacheHitLoop): a server is handed a
 * MemoryConnection (`server.emit("connection", connection)`) and requests are written into it one at
 * a time. node:http parses them and writes its answers as it does on a socket; only the kernel's
 * loopback work is missing.
 */
import { Duplex } from "node:stream";

/** One keep-alive connection: `request` writes a request and resolves once its whole 200 answer came back. */
export class MemoryConnection extends Duplex {
  private received = "";
  private answered: (() => void) | undefined = undefined;

  override _read(): void {}

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.receive(chunk.toString("latin1"));
    callback();
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, callback: () => void): void {
    for (const { chunk } of chunks) this.receive(chunk.toString("latin1"));
    callback();
  }

  request(bytes: string): Promise<void> {
    return new Promise((resolve) => {
      this.answered = resolve;
      this.push(bytes);
    });
  }

  private receive(text: string): void {
    this.received += text;
    const headEnd = this.received.indexOf("\r\n\r\n");
    if (headEnd === -1) return;
    const length = /\r\ncontent-length: (\d+)/i.exec(this.received.slice(0, headEnd));
    if (length === null) throw new Error(`an answer without content-length: ${this.received}`);
    const total = headEnd + 4 + Number(length[1]);
    if (this.received.length < total) return;
    if (!this.received.startsWith("HTTP/1.1 200 ")) throw new Error(`expected a 200: ${this.received.slice(0, total)}`);
    this.received = this.received.slice(total);
    const answered = this.answered;
    this.answered = undefined;
    answered?.();
  }
}

/** CPU µs per request of `n` requests written one after the other into `connection`. */
export const cpuPerRequest = async (connection: MemoryConnection, requestBytes: string, n: number): Promise<number> => {
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) await connection.request(requestBytes);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
};
