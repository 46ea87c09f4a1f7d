/**
 * The one way into prom-client and node:cluster. They are Node modules, so they are imported only
 * when an API turns `metrics` on, never by importing queryserve.
 */
export const loadPrometheus = () => import("./prom.js")
