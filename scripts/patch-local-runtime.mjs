#!/usr/bin/env node
// Run after `npm install`: seven fixes to the local runtime that `wrangler dev`
// and the tests run on, until the pinned versions carry them. Each is
// idempotent; a version whose code differs is left alone, with a warning.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const BROKER = join(root, "node_modules", "miniflare", "dist", "src", "workers", "queues", "broker.worker.js");
export const INSPECTOR_PROXY = join(root, "node_modules", "wrangler", "wrangler-dist", "InspectorProxyWorker.js");
export const MINIFLARE = join(root, "node_modules", "miniflare", "dist", "src", "index.js");
export const TEST_POOL = join(root, "node_modules", "@cloudflare", "vitest-pool-workers", "dist", "pool", "index.mjs");
export const TEST_POOL_WORKER = join(root, "node_modules", "@cloudflare", "vitest-pool-workers", "dist", "worker", "lib", "cloudflare", "test-internal.mjs");

/** A fix: the code it replaces, exactly as the pinned version has it, and what replaces it. */
function fix(unpatched, patched) {
  return (source) => {
    if (source.includes(patched)) return source;
    if (!source.includes(unpatched)) return null;
    return source.replace(unpatched, patched);
  };
}

/**
 * miniflare's local Queues broker hands every sent message to a timer, even
 * one sent with no delay, and none of those timers fires while messages keep
 * arriving; at 10,000 the runtime refuses more ("exceeded the number of
 * active timeouts") and every later send fails, so a long import into `npm
 * start` stops the whole pipeline (cloudflare/workers-sdk#15670; the fix
 * upstream, cloudflare/workers-sdk#15676, enqueues an undelayed message at
 * once, as this does). A delayed message keeps its timer.
 */
export const patchBroker = fix(
  "}, delay = message.delaySecs ?? globalDelay;\n      this.timers.setTimeout(fn, delay * 1e3);",
  "}, delay = message.delaySecs ?? globalDelay;\n      delay > 0 ? this.timers.setTimeout(fn, delay * 1e3) : fn();",
);

/** What `wrangler dev`'s inspector proxy keeps for a DevTools that has not attached yet: the latest messages. */
export const INSPECTOR_BACKLOG = 1000;

/**
 * `wrangler dev`'s inspector proxy keeps every message the Worker's inspector
 * sends (a console call, and several Network events for every subrequest)
 * until a DevTools attaches, and with none attached it keeps them all: under
 * a long load its runtime grows by hundreds of megabytes, and a DevTools
 * attached late gets the whole backlog replayed at once and stalls the
 * proxy. With none attached, it keeps the latest INSPECTOR_BACKLOG.
 */
export const patchInspectorProxy = fix(
  "    this.runtimeMessageBuffer.push(msg);\n    this.tryDrainRuntimeMessageBuffer();",
  `    this.runtimeMessageBuffer.push(msg);\n    if (this.websockets.devtools === void 0 && this.runtimeMessageBuffer.length > ${INSPECTOR_BACKLOG}) this.runtimeMessageBuffer.shift();\n    this.tryDrainRuntimeMessageBuffer();`,
);

/** The workerd gate that raises its process-wide SQLite heap limit from 512 MiB to 8 GiB. */
export const SQLITE_HEAP_GATE = "workerd-autogate-increase-sqlite-hard-heap-limit";

/**
 * workerd caps the SQLite heap of its whole process at 512 MiB, shared by
 * every database it has open. Locally that process holds every Durable
 * Object and every D1 database at once, each object's open database keeping
 * its schema and prepared statements, so a long import into `npm start`
 * (thousands of user and item objects awake) ran out: `SQLITE_NOMEM` from
 * objects and from D1, the aggregator's writes refused, the queues backed
 * up. On Cloudflare objects are spread over many processes. The runtime
 * miniflare starts gets the gate workerd has for a larger limit (8 GiB, the
 * soft limit that makes SQLite purge its page caches stays at 128 MiB).
 */
export const patchMiniflare = fix(
  "      extensions,\n      structuredLogging: this.#structuredWorkerdLogs\n    };",
  `      extensions,\n      autogates: ["${SQLITE_HEAP_GATE}"],\n      structuredLogging: this.#structuredWorkerdLogs\n    };`,
);

/**
 * miniflare's loopback server (the runtime's calls back into Node: service
 * bindings served by Node, the test pool's module fallback and storage
 * snapshots, error reports and logs) has Node's default keep-alive timeout
 * of 5 s, and the runtime keeps its connections to it for reuse: Node
 * closing one as the runtime sends on it loses that request ("Network
 * connection lost", or a Broken pipe in the runtime's log;
 * cloudflare/workers-sdk#14848). In one 20,000-item pass test the runtime
 * logged that Broken pipe as the pass began, and no step committed in the 2
 * minutes after. As upstream (#14850), the loopback server's idle
 * connections stay open until the runtime closes them.
 */
export const patchMiniflareLoopback = fix(
  "      server.on(\"upgrade\", this.#handleLoopbackUpgrade);\n      server.listen(0, hostname, () => resolve6(server));",
  "      server.keepAliveTimeout = 0;\n      server.on(\"upgrade\", this.#handleLoopbackUpgrade);\n      server.listen(0, hostname, () => resolve6(server));",
);

/**
 * A WebSocket miniflare opens to its own runtime (`dispatchFetch` with an
 * Upgrade) offers per-message compression, which the runtime accepts, so every
 * message is deflated on one side and inflated on the other over loopback,
 * where it saves nothing. The test pool talks to each test file's runner over
 * one, and sends it every module of the file's graph: in a CPU profile of 60
 * workerd test files, compression was 15% of the busy time of the test
 * process's main thread, which serves every file's modules. The writes of
 * the larger messages take part of the saving back: with this fix and the
 * tests' central store moved out of that process, its busy time went from
 * 204 s to 193 s.
 */
export const patchMiniflareSocket = fix(
  "    const ws = new import_ws2.default(url38, protocols, {\n      followRedirects: request4.redirect === \"follow\",",
  "    const ws = new import_ws2.default(url38, protocols, {\n      perMessageDeflate: false,\n      followRedirects: request4.redirect === \"follow\",",
);

/**
 * The test pool serialises every message to a test file's runner with
 * devalue, whose string escaping walks each string in JavaScript one
 * character at a time. Those messages carry the code of every module of the
 * file's graph, about 10 MB a file, so escaping took over a second of the
 * test process's main thread per file, the thread that serves every file's
 * modules. JSON's own escaping gives a string devalue reads back the same
 * (it parses with JSON.parse), with the characters devalue escapes beyond
 * JSON's (`<`, U+2028, U+2029) escaped as it does; on two test files it cut
 * the time spent serialising from 2.74 s to 0.42 s.
 */
export const patchTestPoolStrings = fix(
  "function stringify_string(str) {\n\tlet result = \"\";",
  "function stringify_string(str) {\n\treturn JSON.stringify(str).replace(/[<\\u2028\\u2029]/g, (c) => \"\\\\u\" + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, \"0\"));\n\tlet result = \"\";",
);

/**
 * The test pool wraps the Worker's entrypoint and each Durable Object class in
 * a class whose prototype is a Proxy, installed at the first construction (the
 * runtime reads the class's methods before that). The pinned pool installs it
 * at every construction instead, each around the one before, so after N
 * requests to the Worker, or N objects of a class, every property read on an
 * instance runs N nested traps: a test that wakes 1,000 item objects spent
 * its time in those lookups (97% of the runtime's samples in `perf`), and its
 * pass over them had not finished after 3 minutes. Installed once, as the
 * upstream fix does (cloudflare/workers-sdk#15092, #15106).
 */
export const patchTestPoolPrototype = fix(
  "\tfunction Class(...args) {\n\t\tClass.prototype = new Proxy(Class.prototype, {",
  "\tlet proxied = false;\n\tfunction Class(...args) {\n\t\tif (!proxied && (proxied = true)) Class.prototype = new Proxy(Class.prototype, {",
);

/** Applies each fix to its installed file; a file that is absent (a production install) is skipped. */
function applyAll() {
  for (const [path, patch] of [
    [BROKER, patchBroker],
    [INSPECTOR_PROXY, patchInspectorProxy],
    [MINIFLARE, patchMiniflare],
    [MINIFLARE, patchMiniflareSocket],
    [MINIFLARE, patchMiniflareLoopback],
    [TEST_POOL, patchTestPoolStrings],
    [TEST_POOL_WORKER, patchTestPoolPrototype],
  ]) {
    if (!existsSync(path)) continue;
    const source = readFileSync(path, "utf8");
    const patched = patch(source);
    if (patched === null) console.warn(`scripts/patch-local-runtime.mjs: ${path} is not the code this fix knows; left unchanged.`);
    else if (patched !== source) writeFileSync(path, patched);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) applyAll();
