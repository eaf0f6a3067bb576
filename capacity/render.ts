// docs/capacity.md, computed: every figure comes from the inputs; only the
// sentences around the tables are written here.
import type { LatencyInputs } from "./latency";
import { evaluate, evaluateTier, HEADROOM, likeAwakeSeconds, limitsCrossed, objectAwakeSeconds, storageGb, type Measured, type Prices, type ShapeResult, type Workload } from "./model";
import type { PassInputs } from "./passes";
import { latencySection, passSection, readSection, table } from "./render-sections";

const int = (n: number) => Math.round(n).toLocaleString("en-US");
const usd = (n: number) => `$${n >= 100 ? int(n) : n.toFixed(2)}`;
const num = (n: number) => (n >= 100 ? int(n) : n >= 1 ? n.toFixed(2) : n.toPrecision(2));

function largest(result: ShapeResult): { component: string; monthlyUsd: number; share: number } {
  const top = [...result.costs].sort((a, b) => b.monthlyUsd - a.monthlyUsd)[0]!;
  return { ...top, share: top.monthlyUsd / result.totalUsd };
}

export function renderCapacity(w: Workload, m: Measured, p: Prices, l: LatencyInputs, f: PassInputs): string {
  const awake = objectAwakeSeconds();
  const shapes = w.shapes.map((shape) => evaluate(shape, w, m, p));
  const [average, peak] = shapes as [ShapeResult, ShapeResult];
  const tiers = w.tiers.map((tier) => ({ tier, ...evaluateTier(tier, w, m, p) }));
  const storage = storageGb(w);
  const top = largest(average);
  const rowsPerWrite = m.perWrite.rowsWritten + m.perWrite.alarmsSet;
  const rowsLine = average.costs.find((c) => c.component === "Durable Objects rows written")!;
  const out: string[] = [];

  out.push(`# Capacity and cost at the customer's load

Computed by \`npm run capacity\` from five inputs: the counted cost of one
like and of one feed (\`capacity/measured.json\`, from ${m.source}), the
customer's load and this model's assumptions (\`capacity/workload.json\`),
list prices and limits (\`capacity/prices.json\`, ${p.retrieved}, each with its
source), published latency and availability figures (\`capacity/latency.json\`)
and the background passes' costs per item (\`capacity/passes.json\`), with the
read caches' lifetimes from shared/config.ts. Edit an input and run the command again; a test fails when this page
no longer matches them. Every resource is sized to stay under
${Math.round(HEADROOM * 100)} % of its limit.`);

  out.push(`## Answers

- **Monthly cost at ${int(average.shape.likesPerSecond)} likes/s on average: ${usd(average.totalUsd)}**; sized for the
  ${int(peak.shape.likesPerSecond)}/s peak the month would cost ${usd(peak.totalUsd)} if the peak lasted all month
  (usage-billed parts follow the average; only ScyllaDB's cores are bought for the peak).
- **The largest cost line is ${top.component}: ${usd(top.monthlyUsd)} a month, ${Math.round(top.share * 100)} % of the total.**
  ${
    top.component === "Durable Objects rows written"
      ? `A like writes ${num(rowsPerWrite)} billed rows (SQLite rows plus setAlarm calls) at $1.00 per million, against
  $0.15 per million object requests: each row cut from a like saves ${usd(rowsLine.monthlyUsd / rowsPerWrite)} a month at the average load.
  What would cut it: fewer rows per like (docs/benchmarks.md lists each row a like writes and why it is needed),
  and edges kept only on the user side for items that never need a likers list.`
      : `See the per-component table below for what it is made of.`
  }
- **The first limit each tier hits** is in the tier table below, with how far past it the tier goes.
- **A feed costs one store read whatever K is**: at the average load ${average.reads.storeReadsPerFeed.toFixed(2)} store reads per feed
  (the caches miss ${Math.round(average.reads.itemMissRate * 100)} % of a feed's items), ${average.reads.d1QueriesPerFeed < 0.005 ? "0" : average.reads.d1QueriesPerFeed.toFixed(2)} D1 queries and
  ${average.reads.centralRequestsPerFeed.toFixed(2)} central-store batch reads of ${Math.round(average.reads.missesPerStoreRead)} keys at K = ${int(average.needs.d1Databases)}; latency, availability
  and the background passes' time and cost per tier follow the tier table.`);

  out.push(`## What one operation costs (measured)

Counted from \`/metrics\` over a bench run: ${m.conditions}. The item side
coalesces what arrives together, so a busier deployment writes fewer rows per
like than a slow local run; these figures are an upper bound.

${table(
  ["per like or unlike", "value"],
  [
    ["Worker requests", num(m.perWrite.workerRequests)],
    ["Durable Object calls", num(m.perWrite.objectCalls)],
    ["storage commits", num(m.perWrite.commits)],
    ["SQLite rows written", num(m.perWrite.rowsWritten)],
    ["setAlarm calls (billed as rows)", num(m.perWrite.alarmsSet)],
    ["queue messages", num(m.perWrite.queueMessages)],
    ["D1 queries (aggregator)", num(m.perWrite.d1Queries)],
    ["D1 rows written", num(m.perWrite.d1RowsWritten)],
    ["central-store writes", num(m.perWrite.centralWrites)],
  ],
)}

${table(
  ["per feed of 50 in the bench's feed run (K = 1, nearly every feed misses)", "value"],
  [
    ["Durable Object calls", num(m.perFeedMiss.objectCalls)],
    ["D1 queries", num(m.perFeedMiss.d1Queries)],
    ["D1 rows read", num(m.perFeedMiss.d1RowsRead)],
  ],
)}`);

  out.push(`## Rates and resources per load shape

${table(
  ["", ...shapes.map((s) => s.shape.name)],
  [
    ["likes/s", ...shapes.map((s) => int(s.shape.likesPerSecond))],
    ["unlikes/s", ...shapes.map((s) => int(s.shape.unlikesPerSecond))],
    ["count reads/s", ...shapes.map((s) => int(s.shape.countReadsPerSecond))],
    ["feeds/s (50 counts each)", ...shapes.map((s) => int(s.rates.feeds))],
    ["Worker requests/s", ...shapes.map((s) => int(s.rates.workerRequests))],
    ["object requests/s", ...shapes.map((s) => int(s.rates.objectRequests))],
    ["object rows written/s", ...shapes.map((s) => int(s.rates.objectRowsWritten))],
    ["queue messages/s", ...shapes.map((s) => int(s.rates.queueMessages))],
    ["queue operations/s", ...shapes.map((s) => int(s.rates.queueOperations))],
    ["D1 queries/s", ...shapes.map((s) => int(s.rates.d1Queries))],
    ["D1 rows written/s", ...shapes.map((s) => int(s.rates.d1RowsWritten))],
    ["D1 rows read/s", ...shapes.map((s) => int(s.rates.d1RowsRead))],
    ["central-store writes/s", ...shapes.map((s) => int(s.rates.centralWrites))],
    ["queues Q", ...shapes.map((s) => int(s.needs.queues))],
    ["D1 databases K (for queries / for storage)", ...shapes.map((s) => `${int(s.needs.d1Databases)} (${int(s.needs.d1ByQueries)} / ${int(s.needs.d1ByStorage)})`)],
    ["ScyllaDB cores", ...shapes.map((s) => int(s.needs.scyllaCores))],
    [`one item's ceiling at N = ${m.hotShards}`, ...shapes.map((s) => `${int(s.needs.hotItemCeiling)} writes/s`)],
  ],
)}

Stored data: ${int(storage.objects)} GB of edges in the objects (each edge once in
the user's object and once in the item's), ${int(storage.d1)} GB of counts in D1,
${int(storage.central)} GB of edges in the central store before replication.`);

  out.push(`## Monthly cost per component

${table(
  ["component", ...shapes.map((s) => s.shape.name)],
  [
    ...average.costs.map((line, i) => [line.component, ...shapes.map((s) => usd(s.costs[i]!.monthlyUsd))]),
    ["**total**", ...shapes.map((s) => `**${usd(s.totalUsd)}**`)],
  ],
)}

Durable Objects duration is each object call's handler (objectHandlerMs)
plus, for each like or unlike, the ${num(likeAwakeSeconds(w))} s its objects stay unable to
hibernate while the timers that let later likes share their commits run
(\`shared/object-windows.ts\`): ${num(awake.user)} s at the user's object, and ${num(awake.item)} s at
the item's for the ${int((1 - w.assumptions.hotShareOfLikes.value) * 100)} % of likes not on hot items (a hot item is
awake anyway). Cloudflare bills an object's duration while it cannot
hibernate, and a pending timer keeps it from hibernating; likes of one
object within one window share it, so this line is an upper bound.`);

  out.push(`## Next to the customer's tiers

A tier is sized for its like rate at peak and billed on its average
(${w.assumptions.tierAverageToPeak.value} of peak, the customer's own average-to-peak ratio); reads and unlikes
keep the average shape's proportions, and its stored data is the customer's data set scaled by its
peak over the customer's ${int(w.dataSetPeakLikesPerSecond)}/s.

${table(
  ["tier (likes/s at peak)", "their servers", "their cost/month", "plaudit cost/month", "Q", "K", "Scylla cores", "first limit hit (load / limit)"],
  tiers.map(({ tier, result, peak }) => {
    const first = limitsCrossed(peak, w, p)[0]!;
    return [
      int(tier.likesPerSecond),
      tier.servers,
      usd(tier.monthlyUsd),
      usd(result.totalUsd),
      int(result.needs.queues),
      int(result.needs.d1Databases),
      int(result.needs.scyllaCores),
      `${first.limit} (${num(first.ratio)}x)`,
    ];
  }),
)}

Their latency targets are set beside the estimates below.`);

  out.push(readSection(shapes, tiers, w, m));
  out.push(latencySection(tiers, w, l));
  out.push(passSection(tiers, w, p, f, l));

  out.push(`## Assumptions

${table(
  ["assumption", "value", "why"],
  [...Object.entries(w.assumptions), ...Object.entries(w.reads)].map(([name, a]) => [name, String(a.value), a.why]),
)}

Prices and limits marked "assumption" in \`capacity/prices.json\` are not
published list prices. The measured costs come from one machine's local
runtime, where a like's item side is coalesced under that load; at a larger
load coalescing only improves, so the per-like figures are an upper bound.`);

  return out.join("\n\n") + "\n";
}
