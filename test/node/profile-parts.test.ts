import { describe, expect, it } from "vitest";
import { attribute, moduleAt, moduleStarts, partOf, UNATTRIBUTED, type CpuProfile, type ProfileNode } from "../../bench/lib/profile-parts";

const BUNDLE = [
  "var __defProp = Object.defineProperty;",
  "// node_modules/hono/dist/context.js",
  "var Context = class {};",
  "// workers/likes/toggle.ts",
  "function toggleHandler() {}",
  "// durable-objects/lib/metered-storage.ts",
  "class MeteredStorage {}",
  "// shared/deadline.ts",
  "async function withDeadline() {}",
  "// durable-objects/UserLikes.ts",
  "class UserLikes {}",
].join("\n");

const starts = moduleStarts(BUNDLE);

let nextId = 1;
function node(functionName: string, line: number | null, children: ProfileNode[] = []): ProfileNode & { kids: ProfileNode[] } {
  return { id: nextId++, callFrame: { functionName, scriptId: line === null ? "0" : "7", url: line === null ? "" : "index.js", lineNumber: line ?? -1 }, kids: children };
}

/** A profile from a tree, with `ms` sampled on each listed node. */
function profileOf(root: ReturnType<typeof node>, spent: [ProfileNode, number][]): CpuProfile {
  const nodes: ProfileNode[] = [];
  const walk = (n: ReturnType<typeof node>) => {
    nodes.push({ id: n.id, callFrame: n.callFrame, children: n.kids.map((k) => k.id) });
    n.kids.forEach((k) => walk(k as ReturnType<typeof node>));
  };
  walk(root);
  const samples: number[] = [];
  const timeDeltas: number[] = [];
  for (const [n, ms] of spent) {
    samples.push(n.id);
    timeDeltas.push(ms * 1000);
  }
  return { nodes, samples, timeDeltas };
}

describe("the bundle's modules", () => {
  it("finds each module's first line, and the module of any line after it", () => {
    expect(starts.map((s) => s.module)).toEqual([
      "node_modules/hono/dist/context.js",
      "workers/likes/toggle.ts",
      "durable-objects/lib/metered-storage.ts",
      "shared/deadline.ts",
      "durable-objects/UserLikes.ts",
    ]);
    expect(moduleAt(starts, 0)).toBeNull();
    expect(moduleAt(starts, 2)).toBe("node_modules/hono/dist/context.js");
    expect(moduleAt(starts, 4)).toBe("workers/likes/toggle.ts");
    expect(moduleAt(starts, 10)).toBe("durable-objects/UserLikes.ts");
  });

  it("knows a library by its node_modules path, also when node_modules is a link to another checkout's", () => {
    for (const prefix of ["", "../main/"]) {
      expect(partOf(`${prefix}node_modules/hono/dist/context.js`)).toMatchObject({ name: expect.stringMatching(/^Worker request/) });
      expect(partOf(`${prefix}node_modules/jose/dist/webapi/jwt/verify.js`)).toMatchObject({ name: "token verification" });
      expect(partOf(`${prefix}node_modules/wrangler/templates/middleware/common.ts`)).toMatchObject({ name: expect.stringMatching(/^local runtime/) });
    }
    expect(partOf("shared/config.ts")).toBe("shared");
    expect(partOf("shared/deadline.ts")).toMatchObject({ name: "deadline timers" });
  });
});

describe("a profile's time by part", () => {
  it("gives a helper's time, and a native's, to the part that called it, and leaves idle time out", () => {
    const execUnderWorker = node("exec", null);
    const storage = node("commit", 6, [execUnderWorker]);
    const handler = node("toggleHandler", 4, [storage]);
    const execUnderUser = node("exec", null);
    const userStorage = node("commit", 6, [execUnderUser]);
    const user = node("toggle", 10, [userStorage]);
    const clear = node("clearTimeout", null);
    const deadline = node("withDeadline", 8, [clear]);
    const program = node("(program)", null);
    const idle = node("(idle)", null);
    const hono = node("json", 2);
    const root = node("(root)", null, [handler, user, deadline, program, idle, hono]);
    const result = attribute(
      profileOf(root, [
        [execUnderWorker, 3],
        [storage, 1],
        [execUnderUser, 5],
        [clear, 2],
        [program, 4],
        [idle, 100],
        [hono, 6],
      ]),
      new Map([["7", starts]]),
    );
    expect(result.idleMs).toBe(100);
    expect(result.busyMs).toBe(21);
    const part = (name: RegExp | string) => result.parts.find((p) => (typeof name === "string" ? p.name === name : name.test(p.name)));
    expect(part(/^Worker request/)).toMatchObject({ ms: 10, sqlMs: 3, timerMs: 0 });
    expect(part("user object")).toMatchObject({ ms: 5, sqlMs: 5, timerMs: 0 });
    expect(part("deadline timers")).toMatchObject({ ms: 2, sqlMs: 0, timerMs: 2 });
    expect(part(UNATTRIBUTED)).toMatchObject({ ms: 4 });
    expect(result.parts.reduce((n, p) => n + p.ms, 0)).toBe(result.busyMs);
    expect(result.modules["user object"]).toEqual({ "(exec)": 5 });
    expect(result.modules[part(/^Worker request/)!.name]).toEqual({ "(exec)": 3, "durable-objects/lib/metered-storage.ts": 1, "node_modules/hono/dist/context.js": 6 });
    // A sample stands for at most maxSampleMs: the rest of a longer delta (a gap with no sample) is not the isolate's.
    const capped = attribute(profileOf(root, [[execUnderUser, 5], [clear, 0.5], [idle, 3]]), new Map([["7", starts]]), 2);
    expect(capped.busyMs).toBe(2.5);
    expect(capped.idleMs).toBe(6);
    expect(capped.parts.find((p) => p.name === "user object")).toMatchObject({ ms: 2, sqlMs: 2 });
  });
});
