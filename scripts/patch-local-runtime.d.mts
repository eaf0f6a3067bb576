// Types of scripts/patch-local-runtime.mjs (plain JavaScript: it runs at install, before any build).
export const BROKER: string;
export const INSPECTOR_PROXY: string;
export const INSPECTOR_BACKLOG: number;
export function patchBroker(source: string): string | null;
export function patchInspectorProxy(source: string): string | null;
export const MINIFLARE: string;
export const SQLITE_HEAP_GATE: string;
export function patchMiniflare(source: string): string | null;
export function patchMiniflareSocket(source: string): string | null;
export function patchMiniflareLoopback(source: string): string | null;
export const TEST_POOL: string;
export function patchTestPoolStrings(source: string): string | null;
export const TEST_POOL_WORKER: string;
export function patchTestPoolPrototype(source: string): string | null;
