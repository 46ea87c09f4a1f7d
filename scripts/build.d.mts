import type { Plugin } from "esbuild"

/** The file of @effect/platform that holds Scalar's script: `export const javascript = "..."`. */
export declare const scalarModuleFile: () => string
/** Replaces the from-source loader of Scalar's script by the script's module itself. */
export declare const scalarScriptPlugin: Plugin
