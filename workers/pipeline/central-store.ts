import { metrics } from "../../metrics/recorder";
import { COUNTER_TYPES, zeroCounts, type Counts } from "../../shared/counters";
import { withRetries } from "../../shared/retries";
import { Alternator, AlternatorError } from "./alternator";
import { edgeVersion, type CountSnapshot, type EmittedEdge } from "../../shared/emissions";

/** "stale": the store already held something at least as new; for an idempotent writer that is success. */
export type WriteOutcome = "written" | "stale";

/**
 * The central store: ScyllaDB through Alternator. `<prefix>counters` holds
 * each item's counts and snapshot sequence; `<prefix>user_likes` each edge's
 * state and version. Every write is a conditional UpdateItem that sets
 * absolute values only when newer, never an ADD: delivery is at least once,
 * and an increment replayed by a redelivery would count twice.
 */
export class CentralStore {
  readonly #db: Alternator;
  readonly counters: string;
  readonly userLikes: string;

  constructor(db: Alternator, prefix: string) {
    this.#db = db;
    this.counters = `${prefix}counters`;
    this.userLikes = `${prefix}user_likes`;
  }

  async writeSnapshot(item: string, snapshot: CountSnapshot): Promise<WriteOutcome> {
    const names: Record<string, string> = { "#seq": "seq" };
    const values: Record<string, { N: string }> = { ":seq": { N: String(snapshot.seq) } };
    for (const counter of COUNTER_TYPES) {
      names[`#${counter}`] = counter;
      values[`:${counter}`] = { N: String(snapshot.counts[counter]) };
    }
    return await this.#conditional({
      TableName: this.counters,
      Key: { item: { S: item } },
      UpdateExpression: `SET ${[...COUNTER_TYPES, "seq"].map((a) => `#${a} = :${a}`).join(", ")}`,
      ConditionExpression: "attribute_not_exists(#seq) OR #seq < :seq",
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    });
  }

  async writeEdge(item: string, [user, counter, state, inc, seq]: EmittedEdge): Promise<WriteOutcome> {
    return await this.#conditional({
      TableName: this.userLikes,
      Key: { user: { S: user }, item: { S: `${item}:${counter}` } },
      UpdateExpression: "SET #state = :state, #version = :version",
      ConditionExpression: "attribute_not_exists(#version) OR #version < :version",
      ExpressionAttributeNames: { "#state": "state", "#version": "version" },
      ExpressionAttributeValues: { ":state": { N: String(state) }, ":version": { N: String(edgeVersion(inc, seq)) } },
    });
  }

  async readCounts(item: string): Promise<{ seq: number; counts: Counts } | null> {
    const { Item } = await withRetries(() =>
      this.#db.call<{ Item?: Record<string, { N?: string }> }>("GetItem", {
        TableName: this.counters,
        Key: { item: { S: item } },
        ConsistentRead: true,
      }),
    );
    if (!Item) return null;
    const counts = zeroCounts();
    for (const counter of COUNTER_TYPES) counts[counter] = Number(Item[counter]?.N ?? 0);
    return { seq: Number(Item.seq?.N ?? 0), counts };
  }

  async readEdge(user: string, item: string, counter: string): Promise<{ state: number; version: number } | null> {
    const { Item } = await withRetries(() =>
      this.#db.call<{ Item?: Record<string, { N?: string }> }>("GetItem", {
        TableName: this.userLikes,
        Key: { user: { S: user }, item: { S: `${item}:${counter}` } },
        ConsistentRead: true,
      }),
    );
    return Item ? { state: Number(Item.state?.N), version: Number(Item.version?.N) } : null;
  }

  async #conditional(request: Record<string, unknown>): Promise<WriteOutcome> {
    try {
      await withRetries(() => this.#db.call("UpdateItem", request));
      metrics.count("central_store_writes_total", { outcome: "written" });
      return "written";
    } catch (error) {
      if (!(error instanceof AlternatorError && error.conditionFailed)) throw error;
      metrics.count("central_store_writes_total", { outcome: "stale" });
      return "stale";
    }
  }
}
