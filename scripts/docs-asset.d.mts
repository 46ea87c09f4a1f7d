/** The file of @effect/platform that holds Scalar's script (not among its package exports). */
export declare const scalarModuleFile: () => string
