/** A positive number from the environment, or `fallback` when unset. */
export const envNumber = (name: string, fallback: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
};

/**
 * How the log setup (queryserve-full-log) logs, from QS_LOG_MODE: `stdout` (default) `queryLogging:
 * 'json'` written by console.log to the server's real stdout, which the bench sends to /dev/null;
 * `sink` the same lines with console.log replaced by a byte counter (no write at all); `callback` a
 * `queryLogging` function formatting each event with formatQueryEventJSON and dropping the line.
 */
export type LogMode = "stdout" | "sink" | "callback";

export const logMode = (): LogMode => {
  const raw = process.env["QS_LOG_MODE"] ?? "stdout";
  if (raw === "stdout" || raw === "sink" || raw === "callback") return raw;
  throw new Error(`QS_LOG_MODE must be stdout, sink or callback, got "${raw}"`);
};
