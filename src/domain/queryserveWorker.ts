import cluster from "node:cluster"

/** Set on the workers this primary forks, to its pid: a worker of another cluster manager (pm2) has no such primary. */
export const PRIMARY_PID_ENV = "QUERYSERVE_PRIMARY_PID"

/** True in a worker forked by `start({ workers })`, whose primary answers queryserve's IPC messages. */
export const isQueryserveWorker = (): boolean =>
  cluster.isWorker && process.env[PRIMARY_PID_ENV] === String(process.ppid)
