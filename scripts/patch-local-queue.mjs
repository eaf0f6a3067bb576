#!/usr/bin/env node
// Run after `npm install`: a fix to the local Queues of miniflare (what
// `wrangler dev` and the tests run on), until the pinned version carries it.
// Its broker hands every sent message to a timer, even one sent with no
// delay, and none of those timers fires while messages keep arriving; at
// 10,000 the runtime refuses more ("exceeded the number of active timeouts")
// and every later send fails, so a long import into `npm start` stops the
// whole pipeline (cloudflare/workers-sdk#15670; the fix upstream,
// cloudflare/workers-sdk#15676, enqueues an undelayed message at once, as
// this does). A delayed message keeps its timer. Idempotent; a version whose
// code differs is left alone, with a warning.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const BROKER = join(root, "node_modules", "miniflare", "dist", "src", "workers", "queues", "broker.worker.js");

const UNPATCHED = "}, delay = message.delaySecs ?? globalDelay;\n      this.timers.setTimeout(fn, delay * 1e3);";
const PATCHED = "}, delay = message.delaySecs ?? globalDelay;\n      delay > 0 ? this.timers.setTimeout(fn, delay * 1e3) : fn();";

/** The broker's source with the fix applied; null when it holds neither form. */
export function patchBroker(source) {
  if (source.includes(PATCHED)) return source;
  if (!source.includes(UNPATCHED)) return null;
  return source.replace(UNPATCHED, PATCHED);
}

if (process.argv[1] === fileURLToPath(import.meta.url) && existsSync(BROKER)) {
  const source = readFileSync(BROKER, "utf8");
  const patched = patchBroker(source);
  if (patched === null) console.warn(`scripts/patch-local-queue.mjs: ${BROKER} is not the code this fix knows; left unchanged.`);
  else if (patched !== source) writeFileSync(BROKER, patched);
}
