import { describe, expect, it } from "vitest";
import type { ImportOutcome } from "../../shared/contracts";
import type { ImportEdge } from "../../shared/import";
import { Backpressure, FlowControl } from "../../shared/import-flow";
import { runImport, type ImportProgress } from "../../shared/import-run";

async function* linesOf(lines: readonly string[]) {
  yield* lines;
}

function memoryCheckpoint() {
  let saved: ImportProgress | null = null;
  const history: number[] = [];
  return {
    history,
    load: async () => (saved ? structuredClone(saved) : null),
    save: async (progress: ImportProgress) => {
      saved = structuredClone(progress);
      history.push(progress.line);
    },
  };
}

const edgeLine = (user: number, item: number) =>
  JSON.stringify({ user_id: String(user), item_id: String(item), item_type: "post", liked_at: 1_714_564_800_000 + item, kind: "like" });

describe("the import's flow control", () => {
  it("grows its window by one per window acknowledged, halves it on a refusal and holds for the Retry-After", () => {
    let now = 0;
    const flow = new FlowControl({ maxInFlight: 8, now: () => now });
    expect(flow.window).toBe(1);
    flow.acknowledged(); // 1 of 1: grows to 2
    flow.acknowledged();
    flow.acknowledged(); // 2 of 2: grows to 3
    expect(flow.window).toBe(3);
    for (let i = 0; i < 100; i++) flow.acknowledged();
    expect(flow.window).toBe(8);

    flow.refused(new Backpressure(5_000, "503 queue backlog"));
    expect(flow.window).toBe(4);
    expect(flow.waitMs).toBe(5_000);
    now = 4_999;
    expect(flow.waitMs).toBe(1);
    now = 5_000;
    expect(flow.waitMs).toBe(0);

    // No Retry-After: a backoff doubling from one second.
    flow.refused(new Backpressure(null, "no answer"));
    expect([flow.window, flow.waitMs]).toEqual([2, 2_000]);
    flow.refused(new Backpressure(null, "no answer"));
    flow.refused(new Backpressure(null, "no answer"));
    expect([flow.window, flow.waitMs]).toEqual([1, 8_000]);
  });

  it("waits out a busy server however many refusals that takes, gives up once every call was refused for too long, and an acknowledgement starts the clock again", () => {
    let now = 0;
    const flow = new FlowControl({ maxInFlight: 4, giveUpAfterMs: 60_000, now: () => now });
    // 200 refusals within the minute (4 batches in flight, a 1 s Retry-After): still only busy.
    for (let i = 0; i < 200; i++, now += 250) flow.refused(new Backpressure(1_000, "busy"));
    flow.acknowledged();
    now += 1_000;
    for (let i = 0; i < 60; i++, now += 1_000) flow.refused(new Backpressure(1_000, "busy"));
    now += 1_000;
    expect(() => flow.refused(new Backpressure(1_000, "busy"))).toThrow(/refused every call for 61 s \(61 calls\); last: busy/);
  });
});

describe("a parallel import", () => {
  it("keeps batches in flight up to its window, resends refused ones, and checkpoints only a gap-free prefix of the file", async () => {
    const lines = Array.from({ length: 60 }, (_, i) => (i === 17 ? "not json" : edgeLine(i % 7, i)));
    const checkpoint = memoryCheckpoint();
    let inFlight = 0;
    let most = 0;
    let calls = 0;
    const sent: string[] = [];
    const report = await runImport({
      lines: linesOf(lines),
      format: "ndjson",
      batchSize: 5,
      parallel: 4,
      checkpoint,
      send: async (edges: ImportEdge[]): Promise<ImportOutcome[]> => {
        calls++;
        inFlight++;
        most = Math.max(most, inFlight);
        try {
          // Later batches answer first, and the server refuses every fifth call (a 503 with a 1 ms Retry-After).
          await new Promise((resolve) => setTimeout(resolve, Number(edges[0]!.item_id) % 3 === 0 ? 15 : 1));
          if (calls % 5 === 0) throw new Backpressure(1, "503 queue backlog");
          sent.push(...edges.map((edge) => edge.item_id));
          return edges.map(() => "applied");
        } finally {
          inFlight--;
        }
      },
    });
    expect(report).toMatchObject({ line: 60, read: 60, applied: 59, refused: 1, refusals: [{ line: 18, reason: "not JSON" }] });
    // Every edge taken exactly once, although refused batches went again.
    expect(sent.map(Number).sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i).filter((i) => i !== 17));
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(4);
    // Checkpoints only move forward, each at a batch boundary.
    expect(checkpoint.history).toEqual([...checkpoint.history].sort((a, b) => a - b));
    expect(checkpoint.history.at(-1)).toBe(60);
  });

  it("stops on a refusal that is not backpressure, its checkpoint below the first batch not acknowledged", async () => {
    const lines = Array.from({ length: 40 }, (_, i) => edgeLine(1, i));
    const checkpoint = memoryCheckpoint();
    const run = runImport({
      lines: linesOf(lines),
      format: "ndjson",
      batchSize: 5,
      parallel: 3,
      checkpoint,
      send: async (edges) => {
        // The batch of lines 11 to 15 is refused for good; the batches after it may still be acknowledged.
        if (edges[0]!.item_id === "10") throw new Error("the service refused the call: 400");
        await new Promise((resolve) => setTimeout(resolve, 1));
        return edges.map(() => "applied");
      },
    });
    await expect(run).rejects.toThrow("400");
    expect((await checkpoint.load())?.line).toBe(10);

    const resumed = await runImport({ lines: linesOf(lines), format: "ndjson", batchSize: 5, parallel: 3, checkpoint, send: async (edges) => edges.map(() => "duplicate") });
    expect(resumed).toMatchObject({ line: 40, read: 40, applied: 10, duplicates: 30 });
  });
});
