// The read path, latency, availability and background-pass sections of
// docs/capacity.md: every figure computed from the inputs.
import { pathEstimate, type LatencyInputs, type PathEstimate } from "./latency";
import { benchReadPath, cacheLifetimesS, d1RowsPerItem, readItems, type FeedBench, type Measured, type Prices, type ShapeResult, type Tier, type Workload } from "./model";
import { defaultSettings, passes, perUnit, type PassInputs } from "./passes";
import { MAX_STORE_ROUND_TRIPS } from "./reads";

const int = (n: number) => Math.round(n).toLocaleString("en-US");
const num = (n: number) => (n >= 100 ? int(n) : n >= 1 ? n.toFixed(2) : n === 0 ? "0" : n.toPrecision(2));
const pct = (n: number) => `${(n * 100).toFixed(1)} %`;
const uptime = (n: number) => `${(n * 100).toFixed(3)} %`;
const usd = (n: number) => `$${n >= 100 ? int(n) : n.toFixed(2)}`;

export function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

function duration(seconds: number): string {
  if (seconds < 3600) return `${(seconds / 60).toFixed(1)} min`;
  if (seconds < 3 * 86_400) return `${(seconds / 3600).toFixed(1)} h`;
  if (seconds < 365 * 86_400) return `${(seconds / 86_400).toFixed(1)} days`;
  return `${(seconds / (365.25 * 86_400)).toFixed(1)} years`;
}

export type TierResult = { tier: Tier; result: ShapeResult };

/** The feed benches' conditions run through the same read model, next to what the benches counted. */
export function benchCheck(m: Measured) {
  return { predicted: benchReadPath(m.feedBench), rowsPerItem: d1RowsPerItem(m), spread: benchReadPath(m.spreadFeedBench) };
}

/** How many feeds the two checks' bench runs kept in flight, as their reports say, and what that means for the model. */
function checksRan(b: FeedBench, k: FeedBench): string {
  const atOnce = (bench: FeedBench) =>
    bench.connections === 1 ? "one feed at a time, where nothing is shared" : `${bench.connections} feeds at a time, where feeds may share a read and the model counts more`;
  return b.connections === k.connections
    ? `the checks below (K = ${b.countDatabases} and K = ${k.countDatabases}) ran ${atOnce(b)}`
    : `the check below at K = ${b.countDatabases} ran ${atOnce(b)}, the one at K = ${k.countDatabases} ${atOnce(k)}`;
}

export function readSection(shapes: ShapeResult[], tiers: TierResult[], w: Workload, m: Measured): string {
  const ttl = cacheLifetimesS();
  const { predicted, rowsPerItem, spread } = benchCheck(m);
  const b = m.feedBench;
  const k = m.spreadFeedBench;
  const all = [...shapes, ...tiers.map((t) => t.result)];
  return `## Queries per feed, from the layout and the caches

A feed asks for ${w.feedItems} counts. Each item is read through this isolate's
memory (${ttl.memory} s, \`READ_CACHE_MEMORY_TTL_MS\`) and the location's Cache API
(${ttl.edge} s, \`READ_CACHE_EDGE_TTL_MS\`, shared/config.ts); what both miss is read
from the store in one store read of at most ${MAX_STORE_ROUND_TRIPS} round trips
(docs/reads.md). \`capacity/reads.ts\` computes, with p_i the Zipf share of item i,
I isolates and L locations sharing the load equally:

- item i is in a feed with π_i = 1 - exp(-c p_i) (c such that Σ π_i = ${w.feedItems}: a
  feed's items are distinct) and is read λ_i = feeds/s × π_i times a second;
- a cache filled on a miss and trusted for T hits a read with h(r, T) = rT / (1 + rT)
  at r reads a second; the memory tier misses with 1 - h(λ_i / I, T_memory), the Cache
  API then with 1 - h(λ_i (1 - h_memory) / L, T_edge); M = Σ π_i × both misses / ${w.feedItems};
- a feed needs the store when any item missed: **store reads per feed = 1 - (1 - M)^${w.feedItems}**;
- its n misses (binomial in ${w.feedItems}, M) fall in one of K databases with K^(1-n), in
  exactly two with K(K-1)/2 × (2^n - 2) / K^n: then one D1 query per database, else
  **one central-store BatchGetItem** carrying the n keys. **D1 queries per feed =
  Σ_n P(n) × (P(one) + 2 P(two))**, central requests per feed = Σ_n P(n) × (1 - P(one) - P(two)).

Feeds that miss at the same moment in one isolate share a store read
(docs/reads.md): their misses go in one read of up to 100 items. The model
leaves that out, so at many concurrent feeds per isolate it counts more store
reads than are made: an upper bound. docs/benchmarks.md gives the counted D1
queries per feed at 4, 16 and 32 concurrent feeds; ${checksRan(b, k)}.

The popularity is the customer's: over the liked items, the Zipf exponent s
under which the top ${w.reads.topItemShare.value * 100} % of items take ${w.assumptions.hotShareOfLikes.value * 100} % of the likes.

**Checked against a bench run.** \`capacity/bench-feed.json\` (\`npm run bench --
--scenario feed\` on \`npm start\`: one isolate, one location, K = ${b.countDatabases}, Cache API
off, ${int(b.items)} items with Zipf exponent ${b.zipf}, ${b.feedsPerSecond} feeds/s) counted
${num(b.d1QueriesPerFeed)} D1 queries and ${num(b.d1RowsReadPerFeed)} D1 rows read per feed. The model,
given the same conditions, gives ${predicted.d1QueriesPerFeed.toFixed(3)} D1 queries per feed (M = ${predicted.itemMissRate.toFixed(3)},
${num(predicted.d1ItemsPerFeed)} items read from D1 per feed) and so ${num(rowsPerItem)} rows read per item
asked, the four docs/reads.md states (the item's JSON parameter, walked by both of
the query's lookups, and its count and settings rows).
The test recomputes both. At K = 1 a store read is one D1 query, so the counted
D1 queries per feed are the store reads per feed.

**And over ${k.countDatabases} databases.** \`capacity/bench-feed-k4.json\` is the same run with
\`--var COUNT_DATABASES=${k.countDatabases}\` (${int(k.feeds)} feeds, ${k.feedsPerSecond} feeds/s). The bench's \`npm start\` runs
without the central store (\`bench/lib/server.ts\`), so each feed's misses were
read from every database they fall in, one query each (the degraded mode of
docs/reads.md): n misses span K(1 - (1 - 1/K)^n) databases on average, and the
model gives **Σ_n P(n) × K(1 - (1 - 1/K)^n) = ${spread.d1QueriesPerFeedWithoutCentral.toFixed(3)} D1 queries per feed**
(M = ${spread.itemMissRate.toFixed(3)}) where the bench counted ${k.d1QueriesPerFeed.toFixed(3)}. The test allows the
difference four standard errors of a mean over ${int(k.feeds)} feeds, each feed's spread
from the same formula: of S databases spanned by n misses, E[S²] = K p1 + K(K-1) p2,
with p1 = 1 - (1 - 1/K)^n the chance one given database is among them and
p2 = 1 - 2(1 - 1/K)^n + (1 - 2/K)^n that two given ones are.
With the central store, the same misses would have made
${spread.d1QueriesPerFeed.toFixed(3)} D1 queries and ${spread.centralRequestsPerFeed.toFixed(3)} central-store requests per feed.

${table(
  ["", ...all.map((s) => s.shape.name)],
  [
    ["items read (liked items)", ...all.map((s) => int(readItems(w, s.shape).items))],
    ["Zipf exponent s", ...all.map((s) => readItems(w, s.shape).zipf.toFixed(3))],
    ["feeds/s", ...all.map((s) => int(s.rates.feeds))],
    ["item miss rate M (both tiers)", ...all.map((s) => pct(s.reads.itemMissRate))],
    ["store reads per feed", ...all.map((s) => num(s.reads.storeReadsPerFeed))],
    ["missed items per store read", ...all.map((s) => num(s.reads.missesPerStoreRead))],
    ["K (count databases)", ...all.map((s) => int(s.needs.d1Databases))],
    ["D1 queries per feed", ...all.map((s) => num(s.reads.d1QueriesPerFeed))],
    ["D1 queries per feed, central store down", ...all.map((s) => num(s.reads.d1QueriesPerFeedWithoutCentral))],
    ["central-store requests per feed", ...all.map((s) => num(s.reads.centralRequestsPerFeed))],
    ["round trips per store read (at most 2)", ...all.map((s) => num(s.reads.roundTripsPerStoreRead))],
    ["store reads/s", ...all.map((s) => int(s.rates.storeReads))],
    ["feed D1 queries/s", ...all.map((s) => int(s.rates.feeds * s.reads.d1QueriesPerFeed))],
    ["central-store keys read/s", ...all.map((s) => int(s.rates.centralReadKeys))],
    ["ScyllaDB cores for feed reads (in the cores below)", ...all.map((s) => int(s.needs.scyllaCoresForReads))],
  ],
)}

So almost every feed needs the store: with billions of items, a feed's long
tail is nearly always cold, and the caches save item reads (1 - M), not store
reads. What keeps a feed's cost flat is the layout: past two databases the
misses go to the central store in one request whatever K is, so D1 carries the
aggregator's writes and K is sized by them and by storage, not by feeds.`;
}

export function latencySection(tiers: TierResult[], w: Workload, l: LatencyInputs): string {
  const rows = tiers.map(({ tier, result }) => ({ tier, result, e: pathEstimate(result, w, l) }));
  const meets = (ok: (t: Tier, e: PathEstimate) => boolean) => {
    const met = rows.filter(({ tier, e }) => ok(tier, e)).map(({ tier }) => int(tier.likesPerSecond));
    return met.length === 0 ? "no tier" : met.length === rows.length ? "every tier" : `the ${met.join(", ")} tier${met.length > 1 ? "s" : ""}`;
  };
  return `## Latency and availability per tier (estimates from published figures)

Estimated from the parts in \`capacity/latency.json\` (${l.retrieved}), each with its
source; where Cloudflare publishes no figure the part is an assumption and says
so. Times run from the location that takes the request (the reader's own round
trip to it is not counted) and are typical times, not p99s: no published figure
gives these parts' tails. A like is the Worker, the round trip to the user's
object (near the reader, where it was first used, or on another continent) and
its commit; the item, the queue and the stores come after the answer. The first
like of an item in a cold isolate adds a store read (as a feed). A feed is the
Worker and, for a miss, the Cache API and the store read of the tier's layout.

${table(
  ["part", "ms", "source"],
  Object.entries(l.latencyMs).map(([name, f]) => [name, String(f.value), f.source]),
)}

${table(
  ["tier (likes/s at peak)", "like: near / far (target p99)", "feed from memory / Cache API", "feed store read: where", "near / far (target p99)", "like availability", "feed (fresh / any answer)", "target"],
  rows.map(({ tier, e }) => [
    int(tier.likesPerSecond),
    `${e.likeNearMs} / ${e.likeFarMs} ms (${tier.writeP99Ms})`,
    `${e.feedMemoryMs} / ${e.feedEdgeMs} ms`,
    e.feedStore,
    `${e.feedStoreNearMs} / ${e.feedStoreFarMs} ms (${tier.readP99Ms})`,
    uptime(e.likeAvailability),
    `${uptime(e.feedAvailability)} / ${uptime(e.feedAnsweredAvailability)}`,
    "99.99 %",
  ]),
)}

Availability multiplies what is on a path: a like needs the Worker and the
user's object (the queue is behind the outbox, off the path); a fresh feed needs
the Worker and a store (the central store, or D1 when it fails, past two
databases; D1 alone below). Any answer, a stale one marked \`X-Stale-Data\`
included, needs only the Worker: the last-known copies in memory and the Cache
API answer when every store fails.

${table(
  ["availability", "value", "source"],
  Object.entries(l.availability).map(([name, f]) => [name, uptime(f.value), f.source]),
)}

Against the customer's targets (tiers by peak likes/s whose p99 target each
typical time meets): a like near its user's object, ${meets((t, e) => e.likeNearMs <= t.writeP99Ms)};
on another continent, ${meets((t, e) => e.likeFarMs <= t.writeP99Ms)}. A feed from the
isolate's memory, ${meets((t, e) => e.feedMemoryMs <= t.readP99Ms)}; from the Cache API,
${meets((t, e) => e.feedEdgeMs <= t.readP99Ms)}; from the store near it, ${meets((t, e) => e.feedStoreNearMs <= t.readP99Ms)};
far from it, ${meets((t, e) => e.feedStoreFarMs <= t.readP99Ms)}. Nearly every feed reads the store (above), so
the smaller read targets need a read store in each region, not only the caches.
Availability: a fresh feed reaches 99.99 % only through the central store's
fallback to D1; a like needs the Worker and a Durable Object, and with no
published Durable Objects figure (99.9 % assumed) it is ${uptime(rows[0]!.e.likeAvailability)}, below 99.99 %.`;
}

export function passSection(tiers: TierResult[], w: Workload, p: Prices, f: PassInputs, l: LatencyInputs): string {
  const all = tiers.map(({ tier, result }) => ({ tier, k: result.needs.d1Databases, passes: passes(result, w, p, f, l) }));
  const rows = all.flatMap(({ tier, passes: ps }) =>
    ps.map((pass) => [int(tier.likesPerSecond), pass.name, `${num(pass.units)} ${pass.unit}`, duration(pass.seconds), usd(pass.usd), num(pass.work.centralRequests), num(pass.work.centralReads + pass.work.centralWrites), pass.boundBy]),
  );
  const room = (n: number) => (n >= 0 ? `yes (${int(n)}/s left)` : `no (${int(-n)}/s over)`);
  const neededRows = all.flatMap(({ tier, k, passes: ps }) =>
    ps.flatMap((pass) =>
      pass.needed
        ? [[int(tier.likesPerSecond), int(k), pass.name, int(pass.needed.itemsPerSecond), int(pass.needed.settings.concurrency), int(pass.needed.settings.d1QueriesPerSecond), int(pass.needed.settings.centralKeysPerSecond), room(pass.needed.room.db), room(pass.needed.room.countDatabases), room(pass.needed.room.central)]]
        : [],
    ),
  );
  const d = defaultSettings(f);
  const r = perUnit("reconciliation", 1, f);
  return `## Background passes per tier: time and cost

A full reconciliation pass, a full rebuild of D1 and of the central store, and an
import of ${num(f.importEdges)} edges, over each tier's data set (items and edges in
proportion to its peak). Costs per item are read from the code and listed with
where each comes from in \`capacity/passes.json\` (${f.source}); the import's are
counted (${f.import.source}). The dollar cost prices the billed work
(object requests and duration, rows, D1 rows, queue operations, Worker requests)
at \`capacity/prices.json\`; central-store operations are the tier's own cores,
not billed per request.

A pass is split into ranges, each one database's index rows over a slice of
draws (workers/stores/index-walk.ts, shared/passes.ts), walked a step of
\`PASS_STEP_ITEMS\` (${d.stepItems}) items at a time. A reconciliation step costs
${f.stateQueries.value} state queries in \`DB\` (the range's row and its commit), its index page and one D1
read of its items' count rows (workers/pipeline/pass-work.ts): ${num(r.d1Queries * d.stepItems)} queries, about
${num(r.d1RowsRead)} D1 rows read an item (its index row, its count lookup of about ${f.countLookupRows.value}, a share of the
state rows), and one central-store \`BatchGetItem\` per ${f.batchGetKeys.value} items
(workers/pipeline/reconcile.ts, workers/stores/central-store.ts). A D1 rebuild adds
a statement per row written; a central rebuild reads and writes a key per
item and two per edge. The time at the default settings is the units over
the slowest of the pass's own pace limits (workers/pipeline/pass-pace.ts,
shared/config.ts): \`PASS_CONCURRENCY\` (${d.concurrency}) ranges in flight, each one step at a time
(a step's calls ${f.checksInFlight.value} at a time, each a round trip near the consumer:
capacity/latency.json); \`PASS_D1_QUERIES_PER_SECOND\` (${d.d1QueriesPerSecond}) and
\`PASS_CENTRAL_KEYS_PER_SECOND\` (${int(d.centralKeysPerSecond)}), each the whole pass's, shared by the
ranges in flight; and for reconciliation its own pace, every item once per
\`RECONCILE_FULL_PASS_HOURS\` (${f.targetHours.value}). The import is no pass: its time is what
D1, the central store (a conditional write costing ${p.scylla.lwtSlowdown.value} × RF ${p.scylla.replicationFactor.value} operations) and the
queues have to spare at the tier's average load.

${table(["tier (likes/s at peak)", "pass", "size", "time at the default settings", "cost", "central-store requests", "central-store keys", "bound by"], rows)}

**To finish a pass in ${f.targetHours.value} h** the limits must be raised (at 10^10 items that is
${int(1e10 / (f.targetHours.value * 3600))} items a second): the table gives the items a second each tier's pass
needs (a central rebuild also writes ${num(w.likeRecords / w.likedItems)} edges an item, which its other
columns include), and the settings for it at
\`PASS_STEP_ITEMS\` ${f.maxStepItems.value} (the most, so the fewest state queries in \`DB\`):
\`PASS_CONCURRENCY\` (ranges in flight, each one step at a time, so also at
least that many \`PASS_RANGES\`), \`PASS_D1_QUERIES_PER_SECOND\` and
\`PASS_CENTRAL_KEYS_PER_SECOND\`. Then whether the stores have room at the
tier's average load: \`DB\` (one database's spare, less the steps' state
queries, which all go there), the K count databases together (their spare,
less every query of the pass), the central store (its spare operations).
Where \`DB\` has no room, the steps' state is the bound, whatever the limits.
\`PASS_D1_QUERIES_PER_SECOND\` counts a step's queries as if all went to one
database (workers/pipeline/pass-pace.ts), though only the state queries go to
\`DB\` and the rest to the range's database: past one database's ~1,000 a
second it must be set above what any one database takes, so it no longer
protects \`DB\`; the room columns are the check.

${table(["tier (likes/s at peak)", "K", "pass", "items/s", "PASS_CONCURRENCY", "PASS_D1_QUERIES_PER_SECOND", "PASS_CENTRAL_KEYS_PER_SECOND", "DB has room", "count databases have room", "central store has room"], neededRows)}`;
}
