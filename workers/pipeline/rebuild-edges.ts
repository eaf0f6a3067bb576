import type { UserEdge } from "../../shared/contracts";
import type { EmittedEdge } from "../../shared/emissions";
import { withRetries } from "../../shared/retries";
import { userLikes } from "../lib/objects";
import type { CentralStore } from "../stores/central-store";
import { REBUILD_CALLER, REBUILD_CONCURRENCY, type Tally } from "./rebuild-counts";
import { settleAll } from "../../shared/settle";

/** Edges asked of a user's object at once. */
const EDGE_PAGE = 100;

/** An edge's place in its user's key order, as a cursor keeps it. */
export const edgePosition = ({ item, counter }: Pick<UserEdge, "item" | "counter">) => `${item} ${counter}`;

function parsePosition(position: string | undefined): { item: string; counter: string } | null {
  if (!position) return null;
  const [item = "", counter = ""] = position.split(" ");
  return { item, counter };
}

/**
 * Copies one user's edges, from `after` on, from the user's object into both
 * edge tables of the central store, at most `budget` edges. Answers where it
 * stopped: null when the user is finished, else the last edge written (the
 * next call resumes after it). A failure lists the user and leaves the rest
 * of its edges to the next run (a rebuild is idempotent).
 */
export async function rebuildUserEdges(
  env: Env,
  central: CentralStore,
  user: string,
  after: string | undefined,
  budget: number,
  tally: Tally,
): Promise<{ stoppedAt: string | null; spent: number }> {
  let position = after;
  let spent = 0;
  while (spent < budget) {
    const ask = Math.min(EDGE_PAGE, budget - spent);
    let page: UserEdge[];
    try {
      page = await withRetries(() => userLikes(env, user, REBUILD_CALLER).edges(parsePosition(position), ask));
    } catch (error) {
      tally.failed.push({ key: `user:${user}`, error: String(error) });
      return { stoppedAt: null, spent };
    }
    const results = await settleAll(page, REBUILD_CONCURRENCY, (edge) => central.rebuildEdge(edge.item, emitted(user, edge)));
    results.forEach((result, i) => {
      if (result.status === "rejected") tally.failed.push({ key: `user:${user}:${edgePosition(page[i]!)}`, error: String(result.reason) });
      else if (result.value === "written") tally.edges_written++;
      else tally.edges_unchanged++;
    });
    spent += page.length;
    if (page.length < ask) return { stoppedAt: null, spent };
    position = edgePosition(page[page.length - 1]!);
  }
  return { stoppedAt: position ?? null, spent };
}

/** The edge as an emission carries it; an edge stored before edges kept their time carries none. */
function emitted(user: string, { counter, state, inc, seq, at }: UserEdge): EmittedEdge {
  return at > 0 ? [user, counter, state, inc, seq, at] : [user, counter, state, inc, seq];
}
