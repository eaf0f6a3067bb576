// What the soak compares after each kill, read the way an operator would:
// the item objects through the admin view (a strong read), the central store
// directly (a consistent read), and the server's own /metrics.
import { Alternator } from "../../workers/stores/alternator";
import { CentralStore } from "../../workers/stores/central-store";
import type { HttpClient } from "./http";
import { ITEM_TYPE } from "./plaudit";

const PARALLEL = 16;

async function inParallel<T, R>(list: readonly T[], work: (value: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(list.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(PARALLEL, list.length) }, async () => {
      while (next < list.length) {
        const i = next++;
        out[i] = await work(list[i]!);
      }
    }),
  );
  return out;
}

/** Each item's likes in its object (head plus children's reports); null where the view did not answer. */
export async function objectCounts(http: HttpClient, service: string, items: readonly string[]): Promise<Map<string, number | null>> {
  const counts = await inParallel(items, async (item) => {
    const res = await http.request("GET", `/v1/admin/items/${ITEM_TYPE}/${item}`, { token: service });
    const likes = (res.body as { counts?: { likes?: unknown } } | null)?.counts?.likes;
    return res.status === 200 && typeof likes === "number" ? likes : null;
  });
  return new Map(items.map((item, i) => [item, counts[i]!]));
}

/** Each item's likes in the central store (0 where it has no row yet). */
export async function centralCounts(endpoint: string, items: readonly string[]): Promise<Map<string, number>> {
  const store = new CentralStore(new Alternator({ endpoint, region: "us-east-1", accessKeyId: "soak", secretAccessKey: "soak", timeoutMs: 5_000 }), "plaudit_");
  const counts = await inParallel(items, async (item) => (await store.readCounts(`${ITEM_TYPE}:${item}`).catch(() => null))?.counts.likes ?? 0);
  return new Map(items.map((item, i) => [item, counts[i]!]));
}

export type MetricSamples = Map<string, number[]>;

/** Every sample of GET /metrics by metric name; null when the scrape failed. */
export async function scrapeMetrics(http: HttpClient, service: string): Promise<MetricSamples | null> {
  const res = await http.request("GET", "/metrics", { token: service, timeoutMs: 5_000 });
  if (res.status !== 200 || typeof res.body !== "string") return null;
  const samples: MetricSamples = new Map();
  for (const line of res.body.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{[^}]*\})?\s+(\S+)$/.exec(line);
    if (!match) continue;
    const value = Number(match[2]);
    if (!Number.isFinite(value)) continue;
    samples.set(match[1]!, [...(samples.get(match[1]!) ?? []), value]);
  }
  return samples;
}

/** The largest sample of a metric (the worst queue, say); null when it has none. */
export function metricValue(samples: MetricSamples, name: string): number | null {
  const values = samples.get(name);
  return values && values.length > 0 ? Math.max(...values) : null;
}
