// `npm run bench:heap -- [--minutes 5] [--writers 16] [--readers 4] [--users 2000] [--items 2000] [--no-inspector] [--figure NAME]`:
// memory under a steady load over a fixed set of objects. Starts a local
// plaudit (`npm start`, no central store, no schedule) with its inspector
// open, touches every user's and item's object first, then keeps `--writers`
// connections liking and unliking and `--readers` connections reading
// feeds of 50 over the same users and items. Every 10 s it takes the
// Worker isolate's JS heap after a full collection (the live set: every
// object's state and every cache) and each process's resident memory. The
// heap must level off once every object is awake: the printed verdict
// compares the live heap of the run's last sample with its first steady one.
// With --no-inspector no debugger session is opened and only resident
// memory is sampled, to tell what the session itself holds from the rest;
// with --reference-like too, the same likes go to the one-commit reference
// Worker instead, to tell what plaudit holds from what the runtime does.
import { randomBytes } from "node:crypto";
import { cpus, loadavg } from "node:os";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { currentCommit, machineNow, saveFigure, tableFigure, type FigureCell } from "./lib/figures";
import { HttpClient } from "./lib/http";
import { connectInspector } from "./lib/inspector";
import { residentByPart, type Part } from "./lib/memory";
import { answeredWithStatus, flipper, idRange, likeCounts, userTokens } from "./lib/plaudit";
import { freePort, removeStateDir, startReference, startServer } from "./lib/server";
import { wholeArgs } from "./lib/whole-args";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "5" },
    writers: { type: "string", default: "16" },
    readers: { type: "string", default: "4" },
    users: { type: "string", default: "2000" },
    items: { type: "string", default: "2000" },
    figure: { type: "string" },
    "no-inspector": { type: "boolean", default: false },
    "reference-like": { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});
const USAGE = "npm run bench:heap -- [--minutes 5] [--writers 16] [--readers 4] [--users 2000] [--items 2000] [--no-inspector] [--reference-like] [--figure NAME]";
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const whole = wholeArgs(values, USAGE);
const minutes = whole("minutes", 1);
const [writers, readers, userCount, itemCount] = [whole("writers", 1), whole("readers", 0), whole("users", 1), whole("items", 50)];
const SAMPLE_MS = 10_000;
const FEED = 50;

// The one-commit reference (bench/reference/like.ts) under the same likes: what the local runtime's processes
// hold for a Worker that keeps nothing. It serves no feeds, and its heap is not read.
const reference = values["reference-like"];
if (reference && (readers > 0 || !values["no-inspector"])) {
  console.error(`--reference-like needs --readers 0 and --no-inspector\n${USAGE}`);
  process.exit(2);
}
const inspectorPort = await freePort();
const server = reference
  ? await startReference("like", randomBytes(24).toString("hex"))
  : await startServer({
      vars: { RATE_LIMIT_PER_MINUTE: "100000000", RATE_LIMIT_PER_DAY: "100000000" },
      wranglerArgs: ["--inspector-port", String(inspectorPort)],
    });
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void server.kill().finally(() => process.exit(130)));
const startedAt = new Date().toISOString();
// Without a session the heap is not read: only the processes' resident memory, as no debugger touches them.
const inspector = values["no-inspector"] ? null : await connectInspector(inspectorPort);
// The proxy asks the runtime for a Network event per subrequest; nothing here reads them.
await inspector?.send("Network.disable").catch(() => {});

const users = idRange(userCount);
const items = idRange(itemCount, 1_000_000n);
const tokens = await userTokens(users, server.secret);
const http = new HttpClient(server.url, writers + readers);
let ops = 0;
let errors = 0;
/** Failed requests by what came back (a status, or the client's error when none did). */
const failures = new Map<string, number>();
const failed = (res: { status: number; error?: string }) => {
  errors++;
  const what = res.status === 0 ? (res.error ?? "no answer") : String(res.status);
  failures.set(what, (failures.get(what) ?? 0) + 1);
};
const random = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;

const flip = flipper(http, tokens);
async function likeOnce(user: string, item: string): Promise<void> {
  const outcome = await flip(user, item);
  if (!answeredWithStatus(outcome)) failed(outcome.res);
  ops++;
}

// Every object awake before the steady part: each user likes an item, every item is liked.
const touches = Math.max(userCount, itemCount);
let touched = 0;
await Promise.all(
  Array.from({ length: writers + readers }, async () => {
    for (let i = touched++; i < touches; i = touched++) await likeOnce(users[i % userCount]!, items[i % itemCount]!);
  }),
);
process.stderr.write(`${touches} objects' likes sent (${errors} failed); steady load for ${minutes} min\n`);

type Sample = { t: number; opsPerSecond: number; errors: number; heapMb: number | null; heapTotalMb: number | null; parts: Map<Part, number> };
const samples: Sample[] = [];
/** The isolate's live heap (used, after a full collection) and what V8 holds for it (total), in MB. */
const heap = async (): Promise<{ heapMb: number | null; heapTotalMb: number | null }> => {
  if (!inspector) return { heapMb: null, heapTotalMb: null };
  await inspector.send("HeapProfiler.collectGarbage");
  const usage = await inspector.send<{ usedSize: number; totalSize: number }>("Runtime.getHeapUsage");
  return { heapMb: usage.usedSize / 2 ** 20, heapTotalMb: usage.totalSize / 2 ** 20 };
};
const end = Date.now() + minutes * 60_000;
const started = Date.now();
let lastOps = ops;
const sampler = (async () => {
  while (Date.now() < end) {
    await new Promise((r) => setTimeout(r, Math.min(SAMPLE_MS, Math.max(0, end - Date.now()))));
    const sample = { t: Math.round((Date.now() - started) / 1000), opsPerSecond: (ops - lastOps) / (SAMPLE_MS / 1000), errors, ...(await heap()), parts: residentByPart(server.pid) };
    lastOps = ops;
    samples.push(sample);
    const mb = (part: Part) => Math.round(sample.parts.get(part) ?? 0);
    const heapText = sample.heapMb === null ? "heap not read" : `heap ${sample.heapMb.toFixed(1)} of ${sample.heapTotalMb!.toFixed(1)} MB`;
    process.stderr.write(`${sample.t}s  ${sample.opsPerSecond.toFixed(0)} ops/s  ${heapText}  worker runtime ${mb("worker runtime")} MB  proxy ${mb("wrangler proxy")} MB  errors ${errors}\n`);
  }
})();
await Promise.all([
  sampler,
  ...Array.from({ length: writers }, async () => {
    while (Date.now() < end) await likeOnce(random(users), random(items));
  }),
  ...Array.from({ length: readers }, async () => {
    while (Date.now() < end) {
      const feed = new Set<string>();
      while (feed.size < FEED) feed.add(random(items));
      const { res } = await likeCounts(http, [...feed]);
      if (res.status !== 200) failed(res);
      ops++;
    }
  }),
]);
inspector?.close();
await server.stop();
removeStateDir(server.stateDir);

// The first minute wakes objects and fills caches; the heap must not grow after it.
const steady = samples.find((s) => s.t >= 60) ?? samples[0]!;
const last = samples.at(-1)!;
if (failures.size > 0) console.log(`failed requests: ${[...failures].map(([what, n]) => `${n} × ${what}`).join(", ")}`);
const runtimeMb = (s: Sample) => Math.round(s.parts.get("worker runtime") ?? 0);
const heapLine =
  steady.heapMb === null || last.heapMb === null
    ? "live heap not read (--no-inspector)"
    : `live heap ${steady.heapMb.toFixed(1)} MB at ${steady.t}s, ${last.heapMb.toFixed(1)} MB at ${last.t}s: ${last.heapMb - steady.heapMb >= 0 ? "+" : ""}${(last.heapMb - steady.heapMb).toFixed(1)} MB`;
console.log(`${heapLine}; Worker's workerd ${runtimeMb(steady)} MB at ${steady.t}s, ${runtimeMb(last)} MB at ${last.t}s; ${errors} errors; ${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)}`);

// A figure only from a run where every request was answered, as `npm run bench` writes one only from a run that passed.
if (values.figure && errors === 0) {
  const mb = (s: Sample, part: Part): FigureCell => Math.round(s.parts.get(part) ?? 0);
  const rows = samples.filter((s, i) => i % 3 === 2 || s === last).map((s): FigureCell[] => [s.t, s.opsPerSecond, s.heapMb, s.heapTotalMb, mb(s, "worker runtime"), mb(s, "wrangler proxy"), mb(s, "wrangler"), s.errors]);
  const report = tableFigure(
    values.figure,
    { script: "bench:heap", argv: process.argv.slice(2), commit: currentCommit(root), startedAt, machine: machineNow() },
    [
      { name: "second", align: "right" },
      { name: "ops/s", align: "right" },
      { name: "live JS heap MB", align: "right", decimals: 1 },
      { name: "JS heap held MB", align: "right", decimals: 1 },
      { name: "Worker's workerd MB", align: "right" },
      { name: "proxy's workerd MB", align: "right" },
      { name: "wrangler MB", align: "right" },
      { name: "errors so far", align: "right" },
    ],
    rows,
  );
  saveFigure(report);
}
process.exit(errors > 0 ? 1 : 0);
