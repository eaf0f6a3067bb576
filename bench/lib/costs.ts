// What a run cost plaudit, from its own /metrics counters: object calls and
// D1 statements made by the read routes. The difference of two scrapes, taken
// before and after the clock, divided by the feeds served, is the per-feed cost.
import type { HttpClient } from "./http";

const READ_ROUTES = ["/v1/count", "/v1/counts"];

export type ReadCosts = { objectCalls: number; d1Queries: number; d1RowsRead: number };

/** The sum of a counter's samples whose caller label is a read route. */
function sumForReads(text: string, name: string): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const caller = line.match(/caller="([^"]*)"/)?.[1];
    if (caller && READ_ROUTES.includes(caller)) total += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return total;
}

export async function readCosts(http: HttpClient, serviceToken: string): Promise<ReadCosts | null> {
  const res = await http.request("GET", "/metrics", { token: serviceToken });
  if (res.status !== 200 || typeof res.body !== "string") return null;
  return {
    objectCalls: sumForReads(res.body, "plaudit_object_calls_total"),
    d1Queries: sumForReads(res.body, "plaudit_d1_queries_total"),
    d1RowsRead: sumForReads(res.body, "plaudit_d1_rows_read_total"),
  };
}

export const ZERO_COSTS: ReadCosts = { objectCalls: 0, d1Queries: 0, d1RowsRead: 0 };

/** `after - before`, or null when either scrape failed. */
export function diff(before: ReadCosts | null, after: ReadCosts | null): ReadCosts | null {
  if (!before || !after) return null;
  return { objectCalls: after.objectCalls - before.objectCalls, d1Queries: after.d1Queries - before.d1Queries, d1RowsRead: after.d1RowsRead - before.d1RowsRead };
}

/** `a + b`, or null when either is unknown. */
export function plus(a: ReadCosts | null, b: ReadCosts | null): ReadCosts | null {
  if (!a || !b) return null;
  return { objectCalls: a.objectCalls + b.objectCalls, d1Queries: a.d1Queries + b.d1Queries, d1RowsRead: a.d1RowsRead + b.d1RowsRead };
}

/** Per-request costs over a phase: `after - before`, divided by the requests served. */
export function perRequest(before: ReadCosts | null, after: ReadCosts | null, requests: number) {
  if (!before || !after || requests === 0) return null;
  const per = (key: keyof ReadCosts) => Math.round(((after[key] - before[key]) / requests) * 1000) / 1000;
  return { requests, objectCalls: per("objectCalls"), d1Queries: per("d1Queries"), d1RowsRead: per("d1RowsRead") };
}
