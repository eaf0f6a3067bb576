// How far the regional store (D1) lags a like, measured under the run's load:
// a probe user likes a fresh item, then reads it until the answer comes from
// the store (`cached: false`) with the like in it. The store row's `as_of` is
// when the aggregator wrote it, so the lag is `as_of` minus the like's answer.
import type { HttpClient } from "./http";
import { ITEM_TYPE } from "./plaudit";
import { percentile } from "./recorder";

const POLL_MS = 50;
const GIVE_UP_MS = 30_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Probes until `stop()` is true; returns the lags seen, in ms, and the probes that never saw their like. */
export async function probeLag(http: HttpClient, token: string, items: () => string, stop: () => boolean) {
  const lags: number[] = [];
  let lost = 0;
  while (!stop()) {
    const item = items();
    const liked = await http.request("POST", "/v1/like", { token, body: { item_id: item, item_type: ITEM_TYPE } });
    const answeredAt = Date.now();
    if (liked.status !== 200) continue;
    const deadline = answeredAt + GIVE_UP_MS;
    for (;;) {
      const res = await http.request("GET", `/v1/count?item_id=${item}&item_type=${ITEM_TYPE}`);
      const body = res.body as { cached?: boolean; as_of?: string; counts?: { likes?: number } } | null;
      if (res.status === 200 && body?.cached === false && body.counts?.likes === 1 && body.as_of) {
        lags.push(Math.max(0, Date.parse(body.as_of) - answeredAt));
        break;
      }
      if (Date.now() > deadline) {
        lost++;
        break;
      }
      await sleep(POLL_MS);
    }
  }
  const sorted = [...lags].sort((a, b) => a - b);
  return { samples: sorted.length, lost, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? 0 };
}
