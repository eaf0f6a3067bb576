// Types of scripts/local-d1.mjs (plain JavaScript, so `npm start` needs no build step).
export function migrationsHash(root: string): string;
export function isMigrated(root: string, persistTo: string): boolean;
export function markMigrated(root: string, persistTo: string): void;
export function isFresh(persistTo: string): boolean;
export function readyWithoutMigrating(root: string, persistTo: string): boolean;
export function prepareDatabases(root: string, persistTo: string, env?: NodeJS.ProcessEnv): string | null;
export function keepMigrated(root: string, persistTo: string): void;
