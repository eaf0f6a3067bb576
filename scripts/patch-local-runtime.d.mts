// Types of scripts/patch-local-runtime.mjs (plain JavaScript: it runs at install, before any build).
export const BROKER: string;
export const INSPECTOR_PROXY: string;
export const INSPECTOR_BACKLOG: number;
export function patchBroker(source: string): string | null;
export function patchInspectorProxy(source: string): string | null;
