// `npm run bench -- --scenario live [--subscribers 1000,10000] [--rounds 3]`:
// live-count fan-out. For each size, that many sockets subscribe to one item;
// then, round by round, one like is made and the time is taken from its 200
// to the first and to the last socket that received the new count. Reported,
// never asserted; a round where a socket missed the update fails the run.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { scenarioArgs } from "../options";
import { openLive, type LiveSocket } from "../lib/live-client";
import { idRange, userTokens } from "../lib/plaudit";
import { removeStateDir, startServer } from "../lib/server";

const OPEN_CONCURRENCY = 200;
/**
 * Locally every socket costs workerd about 6 file descriptors (the dev
 * server's proxy and loopbacks), so the open-files limit, not the hubs, caps
 * how many sockets one `wrangler dev` holds: about 3,300 under a limit of 20,000.
 */
const FD_HINT = `the local runtime may be out of file descriptors (open-files limit here: ${openFilesLimit()}; workerd needs about 6 a socket)`;
const ARRIVAL_MS = 120_000;

type Round = { firstMs: number; lastMs: number; received: number };
type SizeResult = { subscribers: number; openSeconds: number; rounds: Round[]; notMeasured?: string };


export async function runLiveBench(argv: readonly string[], outDir: string): Promise<number> {
  const values = scenarioArgs(argv, outDir, {
    subscribers: { type: "string", default: "1000,10000" },
    rounds: { type: "string", default: "3" },
  });
  const sizes = String(values.subscribers).split(",").map(Number);
  const rounds = Number(values.rounds);
  if (sizes.some((n) => !Number.isInteger(n) || n < 1 || n > 20_000) || !Number.isInteger(rounds) || rounds < 1 || rounds > 20) {
    console.error("--subscribers takes sizes from 1 to 20000 (comma-separated); --rounds 1 to 20");
    return 2;
  }
  console.error("starting plaudit (npm start) with a fresh state folder...");
  const server = await startServer({ vars: { RATE_LIMIT_PER_MINUTE: "100000", RATE_LIMIT_PER_DAY: "1000000" }, readyTimeoutMs: 120_000 });
  let passed = false;
  try {
    const users = idRange(sizes.length * rounds, 700_000n);
    const tokens = await userTokens(users, server.secret);
    const results: SizeResult[] = [];
    for (const [s, size] of sizes.entries()) {
      results.push(await fanOut(server.url, size, users.slice(s * rounds, (s + 1) * rounds), tokens));
    }
    // A size the local runtime cannot hold is reported, not failed: it says nothing of the code.
    passed = results.every((r) => r.rounds.every((round) => round.received === r.subscribers));
    printTable(results);
    mkdirSync(String(values.out), { recursive: true });
    const file = join(String(values.out), `live-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
    const environment = { cpus: cpus().length, loadavg: loadavg(), node: process.version };
    writeFileSync(file, JSON.stringify({ scenario: "live", passed, environment, results }, null, 2));
    console.log(`report: ${file}`);
    return passed ? 0 : 1;
  } finally {
    await server.stop();
    if (passed) removeStateDir(server.stateDir);
    else console.error(`state and server.log kept in ${server.stateDir}`);
  }
}

async function fanOut(url: string, size: number, users: readonly string[], tokens: ReadonlyMap<string, string>): Promise<SizeResult> {
  const [itemId] = idRange(1, 800_000n + BigInt(size));
  const item = `post:${itemId}`;
  const sockets: LiveSocket[] = [];
  const opening = Date.now();
  try {
    while (sockets.length < size) {
      const opened = await Promise.allSettled(Array.from({ length: Math.min(OPEN_CONCURRENCY, size - sockets.length) }, () => openLive(url, 60_000)));
      const batch = opened.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []));
      sockets.push(...batch);
      const subscribed = await Promise.allSettled(batch.map((socket) => socket.subscribe([item])));
      const failed = opened.length - batch.length + subscribed.filter((s) => s.status === "rejected").length;
      if (failed > 0) {
        const why = `${failed} of the last ${opened.length} sockets did not open or subscribe after ${sockets.length - batch.length} had; ${FD_HINT}`;
        console.error(`${size} subscribers not measured: ${why}`);
        return { subscribers: size, openSeconds: (Date.now() - opening) / 1000, rounds: [], notMeasured: why };
      }
    }
    const openSeconds = (Date.now() - opening) / 1000;
    console.error(`${size} sockets open and subscribed in ${openSeconds.toFixed(1)} s`);
    const rounds: Round[] = [];
    for (const [n, user] of users.entries()) {
      const likes = n + 1;
      const res = await fetch(`${url}/v1/like`, {
        method: "POST",
        headers: { authorization: `Bearer ${tokens.get(user)}`, "content-type": "application/json" },
        body: JSON.stringify({ item_id: itemId, item_type: "post" }),
      });
      if (res.status !== 200) throw new Error(`like answered ${res.status}`);
      const liked = Date.now();
      const arrived = await Promise.allSettled(sockets.map((s) => s.until((latest) => latest.get(item)?.likes === likes, ARRIVAL_MS)));
      const times = sockets.map((s) => s.reachedAt.get(`${item}=${likes}`)).filter((t): t is number => t !== undefined);
      const round = {
        firstMs: Math.min(...times) - liked,
        lastMs: Math.max(...times) - liked,
        received: arrived.filter((a) => a.status === "fulfilled").length,
      };
      console.error(`  like ${likes}: first socket after ${round.firstMs} ms, last after ${round.lastMs} ms, ${round.received}/${size} received`);
      rounds.push(round);
    }
    return { subscribers: size, openSeconds, rounds };
  } finally {
    await Promise.all(sockets.map((s) => s.close()));
  }
}

function openFilesLimit(): string {
  try {
    return /Max open files\s+(\S+)/.exec(readFileSync("/proc/self/limits", "utf8"))?.[1] ?? "unknown";
  } catch {
    return "unknown";
  }
}

function printTable(results: readonly SizeResult[]): void {
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log("subscribers  like->first ms (median)  like->last ms (median)  fan-out ms (last-first, median)  received");
  for (const r of results) {
    if (r.notMeasured) {
      console.log(`${String(r.subscribers).padStart(11)}  not measured: ${r.notMeasured}`);
      continue;
    }
    const first = median(r.rounds.map((x) => x.firstMs));
    const last = median(r.rounds.map((x) => x.lastMs));
    const spread = median(r.rounds.map((x) => x.lastMs - x.firstMs));
    const received = r.rounds.map((x) => `${x.received}/${r.subscribers}`).join(" ");
    console.log(`${String(r.subscribers).padStart(11)}  ${String(first).padStart(23)}  ${String(last).padStart(22)}  ${String(spread).padStart(31)}  ${received}`);
  }
}
