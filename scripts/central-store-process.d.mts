// Types of scripts/central-store-process.mjs (plain JavaScript: `npm start` runs it without a build).
import type { ChildProcessByStdio } from "node:child_process";
import type { Readable, Writable } from "node:stream";

export function spawnCentralStore(folder?: string): { store: ChildProcessByStdio<Writable, Readable, null>; endpoint: Promise<string> };
