// Drives likes and unlikes against a local plaudit, SIGKILLs its whole
// process group mid-traffic, restarts it on the same state and checks what
// survived. Every answer is recorded in the exact model (bench/lib/model.ts):
// an acknowledged action must survive; a request in flight at the kill may
// or may not have landed, and has_liked after the restart decides which.
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { awaitConvergence, awaitOutboxesDrained, checkLikeSets, settleUndecided, type Convergence } from "../../bench/lib/checks";
import { HttpClient } from "../../bench/lib/http";
import { LikeModel } from "../../bench/lib/model";
import { idRange, objectLikeCounts, pendingDeliveries, serviceToken, toggle, userTokens } from "../../bench/lib/plaudit";
import { startServer, type LocalServer } from "../../bench/lib/server";

export type CrashRound = {
  acknowledged: number;
  /** Requests in flight when the group was killed: landed or not, has_liked decides. */
  inFlight: number;
  /** Answers or has_liked results that contradict what was acknowledged. */
  violations: string[];
  convergence: Convergence;
  drained: boolean;
  /** Changes users' objects had acknowledged and not yet delivered to the item side, counted first thing after the restart. */
  undeliveredAtRestart: number;
};

export type CrashRunOptions = {
  stateDir: string;
  users: number;
  items: number;
  kills: number;
  /** Kill once this many actions were acknowledged in the round. */
  acknowledgedBeforeKill: number;
  log: (line: string) => void;
  /** Called with each server started, so a caller can stop it whatever happens. */
  onServer: (server: LocalServer | null) => void;
  /** Settings beyond the raised rate limits. */
  vars?: Record<string, string>;
};

const ARTIFACTS = join(import.meta.dirname, "..", "artifacts");

/** A crash run whose phase timings go to test/artifacts/<logName>, to see where a slow run spent its time. */
export async function loggedCrashRun(logName: string, options: Omit<CrashRunOptions, "log">): Promise<CrashRound[]> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const logFile = join(ARTIFACTS, logName);
  writeFileSync(logFile, "");
  return await crashRun({ ...options, log: (line) => appendFileSync(logFile, `${new Date().toISOString()} ${line}\n`) });
}

const LIMITS = { RATE_LIMIT_PER_MINUTE: "1000000", RATE_LIMIT_PER_DAY: "100000000" };
const SETTLE_TIMEOUT_MS = 30_000;
const TRAFFIC_LIMIT_MS = 30_000;

export async function crashRun(options: CrashRunOptions): Promise<CrashRound[]> {
  const users = idRange(options.users);
  const items = idRange(options.items, 500_000n);
  const model = new LikeModel();
  const rounds: CrashRound[] = [];
  const log = options.log;
  const vars = { ...LIMITS, ...options.vars };
  log("starting");
  let server = await startServer({ stateDir: options.stateDir, vars });
  options.onServer(server);
  log(`started on ${server.url}`);
  const secret = server.secret;
  const tokens = await userTokens(users, secret);
  const service = await serviceToken(secret);
  try {
    for (let round = 0; round < options.kills; round++) {
      const violations: string[] = [];
      let http = new HttpClient(server.url, users.length);
      const traffic = await driveUntilKilled(http, server, model, tokens, items, options.acknowledgedBeforeKill, violations);
      http.close();
      log(`round ${round + 1}: killed after ${traffic.acknowledged} acknowledged, ${traffic.inFlight} in flight`);

      server = await startServer({ stateDir: options.stateDir, vars, secret });
      options.onServer(server);
      log(`round ${round + 1}: restarted on ${server.url}`);
      http = new HttpClient(server.url, 16);
      const undeliveredAtRestart = await undelivered(http, service, users);
      log(`round ${round + 1}: ${undeliveredAtRestart} acknowledged changes not yet delivered`);
      violations.push(...(await settleUndecided(http, model, tokens)));
      violations.push(...(await checkLikeSets(http, model, tokens, items)));
      log(`round ${round + 1}: like sets checked, ${violations.length} violations`);
      // The objects' own counts: what a kill could lose. The regional store's catching up
      // after a kill is the pipeline's delivery, tested on its own in workerd.
      const convergence = await awaitConvergence(http, model, SETTLE_TIMEOUT_MS, (client, batch) => objectLikeCounts(client, service, batch));
      log(`round ${round + 1}: counts ${convergence.converged ? "converged" : "did not converge"} in ${convergence.ms} ms`);
      const { drained, ms } = await awaitOutboxesDrained(http, service, users, SETTLE_TIMEOUT_MS);
      log(`round ${round + 1}: outboxes ${drained ? "drained" : "not drained"} in ${ms} ms`);
      http.close();
      rounds.push({ ...traffic, violations, convergence, drained, undeliveredAtRestart });
    }
  } finally {
    await server.stop();
    options.onServer(null);
  }
  return rounds;
}

/**
 * One sequential loop per user (so each answer says which state the edge was
 * in), all users at once; once enough actions are acknowledged, the whole
 * process group is killed while requests are still in flight.
 */
async function driveUntilKilled(
  http: HttpClient,
  server: LocalServer,
  model: LikeModel,
  tokens: ReadonlyMap<string, string>,
  items: readonly string[],
  acknowledgedBeforeKill: number,
  violations: string[],
) {
  let acknowledged = 0;
  let inFlight = 0;
  let stopping = false;
  let reached: () => void;
  const enough = new Promise<void>((r) => (reached = r));

  const loop = async (user: string, token: string) => {
    while (!stopping) {
      const item = items[Math.floor(Math.random() * items.length)]!;
      const known = model.liked(user, item);
      // Mostly flip the edge; sometimes repeat it, to see already_liked and not_liked too.
      const on = known === undefined ? Math.random() < 0.5 : Math.random() < 0.8 ? !known : known;
      const outcome = await toggle(http, token, item, on);
      if (outcome.kind === "invalid") violations.push(`user ${user} item ${item}: ${outcome.why}`);
      if (outcome.kind !== "answered") continue;
      const why = model.record(user, item, [outcome.answer]);
      if (why) violations.push(why);
      if (outcome.answer.status === null) {
        inFlight++;
        if (!stopping) violations.push(`user ${user}: no answer before the kill (${outcome.res.error ?? outcome.res.status})`);
      } else if (++acknowledged >= acknowledgedBeforeKill) {
        reached();
      }
    }
  };

  const loops = [...tokens].map(([user, token]) => loop(user, token));
  // Bounded, so a server that stopped answering fails the checks instead of hanging the run.
  await Promise.race([enough, new Promise((r) => setTimeout(r, TRAFFIC_LIMIT_MS))]);
  stopping = true;
  await server.kill();
  await Promise.all(loops);
  return { acknowledged, inFlight };
}

/** The changes still in users' outboxes (a user object answers this without delivering first). */
async function undelivered(http: HttpClient, service: string, users: readonly string[]): Promise<number> {
  const pending = await Promise.all(users.map((user) => pendingDeliveries(http, service, user)));
  return pending.reduce<number>((sum, n) => sum + (n ?? 0), 0);
}
