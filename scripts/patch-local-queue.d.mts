// Types of scripts/patch-local-queue.mjs (plain JavaScript: it runs at install, before any build).
export const BROKER: string;
export function patchBroker(source: string): string | null;
