import { DRAW_RANGE } from "../../shared/item-index";
import type { RangeBounds } from "../../shared/passes";
import { MAX_REBUILD_EDGES, type RebuildCursor, type RebuildResponse, type RebuildTarget, encodeCursor } from "../../shared/rebuild";
import type { CentralStore } from "../stores/central-store";
import { indexPage } from "../stores/index-walk";
import { REBUILD_CALLER, emptyTally, rebuildItemCounts, type Tally } from "./rebuild-counts";
import { rebuildUserEdges } from "./rebuild-edges";
import { backfillItemIndex, backfillUserIndex, countedDatabases } from "./rebuild-index";

type Next = RebuildCursor | null;

/**
 * One step of a rebuild (see shared/rebuild.ts): visits the next `limit`
 * keys after `cursor` and answers what it changed and where to go on.
 * Every write is one the pipeline could have made (the stores keep the
 * newest version), so a step repeated, or run beside live traffic, is safe,
 * and a rebuild killed anywhere resumes from its last cursor.
 * `central` is null when the central store is off (a `central` rebuild is then
 * refused by the route). Within `range`, a pass's range (./pass-work.ts):
 * its items, then (central) its users.
 */
export async function rebuildStep(
  env: Env,
  target: RebuildTarget,
  cursor: RebuildCursor | null,
  limit: number,
  central: CentralStore | null,
  range?: RangeBounds,
): Promise<RebuildResponse> {
  const tally = emptyTally();
  const start = cursor ?? (target === "index" ? { phase: "counted", db: 0, key: "" } : { phase: "items", ...walkStart(range) });
  let next: Next;
  switch (start.phase) {
    case "items":
      next = await itemsStep(env, target, start, limit, central, tally, range);
      break;
    case "users":
      next = await usersStep(env, central!, start, limit, tally, range);
      break;
    case "counted":
      next = await backfillItemIndex(env, start.db, start.key, limit, central, tally);
      break;
    case "scan":
      next = await backfillUserIndex(env, central!, start, limit, tally);
      break;
  }
  const databases = next?.phase === "counted" ? (await countedDatabases(env)).length : 1;
  return { target, ...tally, next: next ? encodeCursor(next) : null, progress: progress(target, next, databases) };
}

async function itemsStep(
  env: Env,
  target: RebuildTarget,
  cursor: Extract<RebuildCursor, { phase: "items" }>,
  limit: number,
  central: CentralStore | null,
  tally: Tally,
  range?: RangeBounds,
): Promise<Next> {
  const page = await indexPage(env, "item_index", cursor, limit, REBUILD_CALLER, range);
  await rebuildItemCounts(
    env,
    page.entries.map(({ key }) => key),
    target === "central" ? central : null,
    tally,
  );
  const last = page.entries.at(-1);
  if (!page.done && last) return { phase: "items", ...last };
  // The central store's edge tables follow its counts.
  return target === "central" ? { phase: "users", ...walkStart(range) } : null;
}

/** Where a walk over an index starts: before its first key, or before the first of the range. */
const walkStart = (range?: RangeBounds) => ({ draw: range ? range.lo : -1, key: "" });

/** The next users' edges, at most MAX_REBUILD_EDGES of them in one step (a user with more is finished over several). */
async function usersStep(
  env: Env,
  central: CentralStore,
  cursor: Extract<RebuildCursor, { phase: "users" }>,
  limit: number,
  tally: Tally,
  range?: RangeBounds,
): Promise<Next> {
  let budget = MAX_REBUILD_EDGES;
  let at: { draw: number; key: string } = { draw: cursor.draw, key: cursor.key };
  if (cursor.edge !== undefined) {
    // A user left unfinished by the previous step.
    const { stoppedAt, spent } = await rebuildUserEdges(env, central, cursor.key, cursor.edge, budget, tally);
    if (stoppedAt !== null) return { ...at, phase: "users", edge: stoppedAt };
    tally.checked++;
    budget -= spent;
  }
  const page = await indexPage(env, "user_index", at, limit, REBUILD_CALLER, range);
  for (const entry of page.entries) {
    if (budget <= 0) return { phase: "users", ...at };
    const { stoppedAt, spent } = await rebuildUserEdges(env, central, entry.key, undefined, budget, tally);
    if (stoppedAt !== null) return { phase: "users", ...entry, edge: stoppedAt };
    tally.checked++;
    budget -= spent;
    at = entry;
  }
  return page.done ? null : { phase: "users", ...at };
}

/** How far a walk has gone: draws are spread evenly over their range, so a cursor's draw tells; the index's walk goes database by database (`databases` of them). */
function progress(target: RebuildTarget, next: Next, databases: number): number {
  if (!next) return 1;
  switch (next.phase) {
    case "items":
      return (target === "central" ? 0.5 : 1) * Math.max(0, next.draw / DRAW_RANGE);
    case "users":
      return 0.5 + 0.5 * Math.max(0, next.draw / DRAW_RANGE);
    case "counted":
      return (0.5 * next.db) / databases;
    case "scan":
      // A scan's order is the store's own: its progress is known only when it ends.
      return 0.5;
  }
}
