// Types of scripts/migrations-stamp.mjs (plain JavaScript, so `npm start` needs no build step).
export function migrationsHash(root: string): string;
export function isMigrated(root: string, persistTo: string): boolean;
export function markMigrated(root: string, persistTo: string): void;
