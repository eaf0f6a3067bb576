import { writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { HttpClient } from "./lib/http";
import { connectInspector } from "./lib/inspector";
import { flipper, idRange, userTokens } from "./lib/plaudit";
import { moduleStarts, type CpuProfile } from "./lib/profile-parts";
import { freePort, removeStateDir, startServer } from "./lib/server";

const rate = Number(process.env.RATE ?? 40);
const seconds = Number(process.env.SECONDS ?? 40);
const warm = Number(process.env.WARM ?? 20);
const save = process.env.SAVE ?? "/tmp/rate.cpuprofile";
const inspectorPort = await freePort();
const server = await startServer({ vars: { RATE_LIMIT_PER_MINUTE: "100000000", RATE_LIMIT_PER_DAY: "100000000" }, wranglerArgs: ["--inspector-port", String(inspectorPort)] });
const inspector = await connectInspector(inspectorPort);
await inspector.send("Network.disable").catch(() => {});
const users = idRange(300);
const items = idRange(1000, 1_000_000n);
const tokens = await userTokens(users, server.secret);
const http = new HttpClient(server.url, 128);
const flip = flipper(http, tokens);
const random = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;
const lat: { t: number; ms: number }[] = [];
const t0 = performance.now();
let profiling = false;
async function run(total: number, record: boolean) {
  const start = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total * rate; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    pending.push(
      (async () => {
        const s = performance.now();
        await flip(random(users), random(items));
        if (record) lat.push({ t: s - t0, ms: performance.now() - s });
      })(),
    );
  }
  await Promise.all(pending);
}
await run(warm, false);
await inspector.send("Profiler.enable");
await inspector.send("Profiler.setSamplingInterval", { interval: 200 });
await inspector.send("Profiler.start");
const pStart = performance.now() - t0;
await run(seconds, true);
const { profile } = await inspector.send<{ profile: CpuProfile }>("Profiler.stop");
await inspector.send("Debugger.enable");
const bundles: Record<string, { line: number; module: string }[]> = {};
for (const scriptId of new Set(profile.nodes.filter((n) => n.callFrame.url.endsWith(".js")).map((n) => n.callFrame.scriptId))) {
  const { scriptSource } = await inspector.send<{ scriptSource: string }>("Debugger.getScriptSource", { scriptId });
  const starts = moduleStarts(scriptSource);
  if (starts.length > 0) bundles[scriptId] = starts;
}
inspector.close();
http.close();
await server.stop();
removeStateDir(server.stateDir);
writeFileSync(save, JSON.stringify({ profile, bundles, lat, pStart }));
const sorted = lat.map((l) => l.ms).sort((a, b) => a - b);
console.log(`n ${sorted.length} p50 ${sorted[Math.floor(sorted.length * 0.5)]!.toFixed(2)} p99 ${sorted[Math.floor(sorted.length * 0.99)]!.toFixed(2)}`);
process.exit(0);
