/** schemas/core-kinds.json's path. */
export const TABLE: string;
/** The table as the installed @kubernetes/client-node gives it. */
export function coreKindTable(): Promise<{ source: string; models: Record<string, [string, string, string][]> }>;
