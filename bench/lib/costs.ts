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

/** Each cost of `a` and `b` combined by `op`, or null when either is unknown (a scrape failed). */
function fieldwise(a: ReadCosts | null, b: ReadCosts | null, op: (x: number, y: number) => number): ReadCosts | null {
  if (!a || !b) return null;
  return { objectCalls: op(a.objectCalls, b.objectCalls), d1Queries: op(a.d1Queries, b.d1Queries), d1RowsRead: op(a.d1RowsRead, b.d1RowsRead) };
}

/** `after - before`. */
export const diff = (before: ReadCosts | null, after: ReadCosts | null) => fieldwise(after, before, (x, y) => x - y);

/** `a + b`. */
export const plus = (a: ReadCosts | null, b: ReadCosts | null) => fieldwise(a, b, (x, y) => x + y);

/** Per-request costs over a phase: `after - before`, divided by the requests served. */
export function perRequest(before: ReadCosts | null, after: ReadCosts | null, requests: number) {
  const spent = diff(before, after);
  if (!spent || requests === 0) return null;
  const per = (key: keyof ReadCosts) => Math.round((spent[key] / requests) * 1000) / 1000;
  return { requests, objectCalls: per("objectCalls"), d1Queries: per("d1Queries"), d1RowsRead: per("d1RowsRead") };
}
