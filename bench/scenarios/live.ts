// `npm run bench -- --scenario live [--subscribers 1000,10000] [--rounds 3] [--direct]`:
// live-count fan-out. For each size, that many sockets subscribe to one item;
// then, round by round, one like is made and the time is taken from its 200
// to the first and to the last socket that received the new count. Reported,
// never asserted; a round where a socket missed the update fails the run.
//
// The server is `npm start` (wrangler dev) by default. `--direct` serves the
// same Worker with the bench's direct server instead (bench/direct-server.ts:
// the deploy bundle in one Miniflare, without wrangler dev's proxy): under
// wrangler dev the proxy's workerd spends about 6 file descriptors on every
// socket and stops near 3,300 sockets under an open-files limit of 20,000;
// the direct server spends about 1, so 10,000 fit. The client is this one
// process, 1 descriptor a socket. After opening each size the run counts
// every server process's descriptors and reports what a socket cost each.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { scenarioArgs } from "../options";
import { openLive, type LiveSocket } from "../lib/live-client";
import { idRange, userTokens } from "../lib/plaudit";
import { groupFds, ownFds, type ProcessFds } from "../lib/fds";
import { removeStateDir, startDirectServer, startServer } from "../lib/server";
import { currentCommit, machineNow, saveFigure, tableFigure, type FigureCell, type FigureColumn } from "../lib/figures";

const OPEN_CONCURRENCY = 200;
/**
 * Under wrangler dev every socket costs the proxy's workerd about 6 file
 * descriptors (the client's connection, a loopback connection to the user
 * Worker's workerd, two pipes), so the open-files limit, not the hubs, caps
 * how many sockets one `wrangler dev` holds: about 3,300 under a limit of
 * 20,000. The direct server's one workerd needs about 1 a socket.
 */
const fdHint = (direct: boolean) =>
  `the local runtime may be out of file descriptors (open-files limit here: ${openFilesLimit()}; ` +
  (direct ? "the direct server's workerd and this client need about 1 a socket each)" : "wrangler dev's proxy workerd needs about 6 a socket; try --direct)");
const ARRIVAL_MS = 120_000;

type Round = { firstMs: number; lastMs: number; received: number };
/** Descriptors with no socket open and with a size's sockets open, per process. */
type FdCount = { pid: number; command: string; idle: number; open: number; perSocket: number };
/** `loadavg` is the machine's load average (1, 5, 15 min) once the size's sockets were open. */
type SizeResult = { subscribers: number; openSeconds: number; loadavg: number[]; rounds: Round[]; fds?: FdCount[]; notMeasured?: string };
type Server = { url: string; pid: number };


export async function runLiveBench(argv: readonly string[], outDir: string): Promise<number> {
  const values = scenarioArgs(argv, outDir, {
    subscribers: { type: "string", default: "1000,10000" },
    rounds: { type: "string", default: "3" },
    direct: { type: "boolean", default: false },
    figure: { type: "string" },
  });
  const startedAt = new Date().toISOString();
  const direct = values.direct === true;
  const sizes = String(values.subscribers).split(",").map(Number);
  const rounds = Number(values.rounds);
  if (sizes.some((n) => !Number.isInteger(n) || n < 1 || n > 20_000) || !Number.isInteger(rounds) || rounds < 1 || rounds > 20) {
    console.error("--subscribers takes sizes from 1 to 20000 (comma-separated); --rounds 1 to 20");
    return 2;
  }
  console.error(`starting plaudit (${direct ? "the bench's direct server, bench/direct-server.ts" : "npm start"}) with a fresh state folder...`);
  const start = direct ? startDirectServer : startServer;
  const server = await start({ vars: { RATE_LIMIT_PER_MINUTE: "100000", RATE_LIMIT_PER_DAY: "1000000" }, readyTimeoutMs: 180_000 });
  const loadAtStart = loadavg();
  const idle = [...groupFds(server.pid), { pid: process.pid, command: "bench client (this process)", fds: ownFds() }];
  let passed = false;
  try {
    const users = idRange(sizes.length * rounds, 700_000n);
    const tokens = await userTokens(users, server.secret);
    const results: SizeResult[] = [];
    for (const [s, size] of sizes.entries()) {
      results.push(await fanOut(server, direct, idle, size, users.slice(s * rounds, (s + 1) * rounds), tokens));
    }
    // A size the local runtime cannot hold is reported, not failed: it says nothing of the code.
    passed = results.every((r) => r.rounds.every((round) => round.received === r.subscribers));
    printTable(results);
    mkdirSync(String(values.out), { recursive: true });
    const file = join(String(values.out), `live-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
    const target = direct ? "bench direct server (bench/direct-server.ts: Miniflare, no wrangler dev proxy)" : "npm start (wrangler dev)";
    const environment = { target, cpus: cpus().length, loadavgAtStart: loadAtStart, loadavg: loadavg(), node: process.version, openFilesLimit: openFilesLimit() };
    writeFileSync(file, JSON.stringify({ scenario: "live", passed, environment, results }, null, 2));
    console.log(`report: ${file}`);
    if (typeof values.figure === "string" && passed) {
      const run = { script: "bench", argv, commit: currentCommit(), startedAt, machine: machineNow() };
      saveFigure(tableFigure(values.figure, run, LIVE_COLUMNS, results.map((r) => liveRow(r, direct ? "direct" : "`npm start`"))));
    }
    return passed ? 0 : 1;
  } finally {
    await server.stop();
    if (passed) removeStateDir(server.stateDir);
    else console.error(`state and server.log kept in ${server.stateDir}`);
  }
}

async function fanOut(
  server: Server,
  direct: boolean,
  idle: readonly ProcessFds[],
  size: number,
  users: readonly string[],
  tokens: ReadonlyMap<string, string>,
): Promise<SizeResult> {
  const { url } = server;
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
        const fds = countFds(server, idle, sockets.length);
        const why = `${failed} of the last ${opened.length} sockets did not open or subscribe after ${sockets.length - batch.length} had; ${fdHint(direct)}`;
        console.error(`${size} subscribers not measured: ${why}`);
        return { subscribers: size, openSeconds: (Date.now() - opening) / 1000, loadavg: loadavg(), rounds: [], fds, notMeasured: why };
      }
    }
    const openSeconds = (Date.now() - opening) / 1000;
    console.error(`${size} sockets open and subscribed in ${openSeconds.toFixed(1)} s`);
    const fds = countFds(server, idle, size);
    const load = loadavg();
    console.error(`  load average ${load.map((l) => l.toFixed(2)).join(" ")}`);
    for (const f of fds) console.error(`  ${f.command}: ${f.idle} -> ${f.open} descriptors, ${f.perSocket.toFixed(2)} a socket`);
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
    return { subscribers: size, openSeconds, loadavg: load, rounds, fds };
  } finally {
    await Promise.all(sockets.map((s) => s.close()));
  }
}

/** Each process's descriptors now against `idle` (no socket open), per socket of `sockets`. */
function countFds(server: Server, idle: readonly ProcessFds[], sockets: number): FdCount[] {
  const now = [...groupFds(server.pid), { pid: process.pid, command: "bench client (this process)", fds: ownFds() }];
  return now.map((p) => {
    const before = idle.find((i) => i.pid === p.pid)?.fds ?? 0;
    return { pid: p.pid, command: p.command, idle: before, open: p.fds, perSocket: sockets > 0 ? (p.fds - before) / sockets : 0 };
  });
}

function openFilesLimit(): string {
  try {
    return /Max open files\s+(\S+)/.exec(readFileSync("/proc/self/limits", "utf8"))?.[1] ?? "unknown";
  } catch {
    return "unknown";
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The figure table of a live run (`--figure`): one row per size, every round's times. */
const LIVE_COLUMNS: FigureColumn[] = [
  { name: "subscribers", align: "right" },
  { name: "server", align: "left" },
  { name: "load average (1 min) once open", align: "right", decimals: 1 },
  { name: "like → first socket, ms, by round", align: "left" },
  { name: "like → last socket, ms, by round", align: "left" },
  { name: "fan-out (last − first), median ms", align: "right" },
  { name: "received", align: "left" },
];

function liveRow(r: SizeResult, server: string): FigureCell[] {
  if (r.notMeasured) return [r.subscribers, server, r.loadavg[0] ?? null, `not measured: ${r.notMeasured}`, null, null, null];
  const all = r.rounds.every((x) => x.received === r.subscribers);
  return [
    r.subscribers,
    server,
    r.loadavg[0] ?? null,
    r.rounds.map((x) => x.firstMs).join(" / "),
    r.rounds.map((x) => x.lastMs).join(" / "),
    median(r.rounds.map((x) => x.lastMs - x.firstMs)),
    all ? "all, every round" : r.rounds.map((x) => `${x.received}/${r.subscribers}`).join(" "),
  ];
}

function printTable(results: readonly SizeResult[]): void {
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
