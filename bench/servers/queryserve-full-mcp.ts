/**
 * queryserve, setup "full" with `mcp: true`: the same endpoints, also served as MCP tools at
 * /api/analytics/mcp. Driven by bench/tasks/mcp.ts (tools/call next to plain HTTP).
 */
import { runQueryserveServer } from "../lib/queryserve.js";

runQueryserveServer("full-mcp", { post: true, auth: true });
