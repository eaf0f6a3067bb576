// Where a CPU profile of the Worker isolate spent its time, by part of
// plaudit (`npm run bench:profile`). The profile's samples point into the
// bundle `wrangler dev` built; esbuild starts each module there with a
// `// path/to/module.ts` line, so a sample's line names its module.
//
// Modules from node_modules are named as esbuild resolved them: when
// node_modules is a link, under the path it leads to.
//
// A sample belongs to the first module on its stack, from the running frame
// down, that belongs to one part: helpers every part uses (storage, the
// alarm, SQL schemas, shared/) are passed over, so a SQL statement run by the
// user object counts as the user object's, and native work (a statement, a
// timer) counts for the code that asked for it.

/** One node of a V8 CPU profile (`Profiler.stop`). */
export type ProfileNode = {
  id: number;
  callFrame: { functionName: string; scriptId: string; url: string; lineNumber: number };
  children?: number[];
};
export type CpuProfile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };

/** A part of plaudit, and whether the one-commit reference (bench/reference/like.ts) does that work too. */
export type Part = { name: string; reference: string; modules: RegExp };

/** In order: the first that matches a module names its part. */
export const PARTS: readonly Part[] = [
  { name: "token verification", reference: "the same", modules: /^workers\/auth\/|(^|\/)node_modules\/jose\// },
  { name: "object-call dispatch", reference: "1 call a like", modules: /^durable-objects\/lib\/object-calls\.ts$/ },
  { name: "deadline timers", reference: "none", modules: /^shared\/deadline\.ts$/ },
  {
    name: "user object",
    reference: "its one commit",
    modules: /^durable-objects\/(UserLikes\.ts|lib\/(user-|edge-delivery|own-likes|toggle-limits|removal))/,
  },
  {
    name: "item side",
    reference: "none",
    modules:
      /^durable-objects\/(ItemCounter|ItemShard|LiveHub)\.ts$|^durable-objects\/lib\/(head-state|emitter|emission-|commit-batcher|child-reports|handover|hot-policy|in-flight|event-counters|unique-viewers|live-registry|recheck|item-)/,
  },
  { name: "pipeline (queue consumer, aggregator, D1 writes)", reference: "none", modules: /^workers\/pipeline\// },
  { name: "metrics", reference: "none", modules: /^(metrics\/|workers\/metrics\/|durable-objects\/MetricsAccumulator\.ts$)/ },
  { name: "Worker request (routing, validation, limits, privacy, answer)", reference: "routing and answer", modules: /^workers\/|(^|\/)node_modules\/(hono|zod)\// },
  { name: "local runtime's wrappers (wrangler dev)", reference: "the same", modules: /^\.wrangler\/|(^|\/)node_modules\/(wrangler|miniflare)\// },
];

/** Modules every part calls: a sample in one of them belongs to the part that called it. */
const SHARED = /^(shared\/(?!deadline\.ts)|workers\/stores\/|workers\/lib\/ttl-cache\.ts$|durable-objects\/lib\/(metered-storage|alarm|soon|keyed-chain|state-row|sql-schema|placement-cache|queue-send|write-rate)\.ts$)/;

export const UNATTRIBUTED = "runtime, and code after an await with no part on its stack";

/** The native leaves that are SQL, and those that are timers: what a part spends on each. */
const SQL = new Set(["exec", "transactionSync", "toArray", "one", "raw"]);
const TIMERS = new Set(["setTimeout", "clearTimeout"]);

/** Module start lines of a bundle: each `// path.ts` comment line that esbuild writes before a module. */
export function moduleStarts(bundle: string): { line: number; module: string }[] {
  const starts: { line: number; module: string }[] = [];
  bundle.split("\n").forEach((text, line) => {
    const match = /^\/\/ (\S+\.(?:ts|js|mjs|cjs))$/.exec(text);
    if (match) starts.push({ line, module: match[1]! });
  });
  return starts;
}

/** The module a 0-based line of the bundle falls in; null before the first. */
export function moduleAt(starts: readonly { line: number; module: string }[], line: number): string | null {
  let low = 0;
  let high = starts.length - 1;
  let found: string | null = null;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if (starts[mid]!.line <= line) {
      found = starts[mid]!.module;
      low = mid + 1;
    } else high = mid - 1;
  }
  return found;
}

export function partOf(module: string | null): Part | "shared" | null {
  if (module === null) return null;
  if (SHARED.test(module)) return "shared";
  return PARTS.find((part) => part.modules.test(module)) ?? null;
}

/** Per part: busy milliseconds, of which SQL and timers (native leaves), over the whole profile. */
export type PartTimes = { name: string; reference: string; ms: number; sqlMs: number; timerMs: number };

/** Busy milliseconds by part, then by the module (or native function) of the sample's running frame. */
export type ModuleTimes = Record<string, Record<string, number>>;

export type Attribution = { busyMs: number; idleMs: number; parts: PartTimes[]; modules: ModuleTimes };

/**
 * Attributes every sampled millisecond: idle time (and the gaps past
 * `maxSampleMs`) aside, each sample to the
 * part of the first frame on its stack (leaf first) that has one. `bundles`
 * gives the module starts of each script id whose frames point into a bundle.
 */
export function attribute(profile: CpuProfile, bundles: ReadonlyMap<string, { line: number; module: string }[]>, maxSampleMs = Infinity): Attribution {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const spent = new Map<number, number>();
  // The runtime's sampler takes no sample while the isolate's thread runs no
  // JavaScript (waiting for work, off the CPU in a commit's disk flush, or
  // waiting for a core):
  // the next sample's time delta spans that gap. A sample stands for at most
  // `maxSampleMs`; the rest of its delta is time the thread was not running the isolate.
  let gapMs = 0;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    spent.set(id, (spent.get(id) ?? 0) + Math.min(ms, maxSampleMs));
    gapMs += Math.max(0, ms - maxSampleMs);
  });

  const times = new Map<string, PartTimes>();
  const add = (name: string, reference: string, ms: number, leaf: ProfileNode["callFrame"]) => {
    const entry = times.get(name) ?? { name, reference, ms: 0, sqlMs: 0, timerMs: 0 };
    entry.ms += ms;
    // Natives have no script: a JS function named `next` is not a cursor's.
    if (leaf.url === "" && SQL.has(leaf.functionName)) entry.sqlMs += ms;
    if (leaf.url === "" && TIMERS.has(leaf.functionName)) entry.timerMs += ms;
    times.set(name, entry);
  };
  const modules: ModuleTimes = {};
  const leafName = (node: ProfileNode): string => {
    const starts = bundles.get(node.callFrame.scriptId);
    const module = starts ? moduleAt(starts, node.callFrame.lineNumber) : null;
    return module ?? `(${node.callFrame.functionName || "anonymous"}${node.callFrame.url ? ` in ${node.callFrame.url}` : ""})`;
  };
  let idleMs = gapMs;
  let busyMs = 0;
  for (const [id, ms] of spent) {
    const leaf = byId.get(id)!;
    if (leaf.callFrame.functionName === "(idle)") {
      idleMs += ms;
      continue;
    }
    busyMs += ms;
    let part: Part | null = null;
    for (let at: number | undefined = id; at !== undefined && part === null; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      const starts = bundles.get(frame.scriptId);
      const found = starts ? partOf(moduleAt(starts, frame.lineNumber)) : null;
      if (found !== null && found !== "shared") part = found;
    }
    const name = part?.name ?? UNATTRIBUTED;
    add(name, part?.reference ?? "some", ms, leaf.callFrame);
    const byModule = (modules[name] ??= {});
    const module = leafName(leaf);
    byModule[module] = (byModule[module] ?? 0) + ms;
  }
  const order = [...PARTS.map((part) => part.name), UNATTRIBUTED];
  const parts = [...times.values()].sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
  return { busyMs, idleMs, parts, modules };
}
