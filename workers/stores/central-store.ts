import { metrics } from "../../metrics/recorder";
import { COUNTER_TYPES, zeroCounts, type Counts } from "../../shared/counters";
import { withRetries } from "../../shared/retries";
import { Alternator, AlternatorError } from "./alternator";
import { edgeVersion, type CountSnapshot, type EmittedEdge } from "../../shared/emissions";
import type { ItemSettings, Visibility } from "../../shared/privacy";

/** The item-to-likers table's index: an item's likers in `liked_at` order. WARNING: a deployed name; never change it. */
export const ITEM_LIKES_BY_TIME = "by_liked_at";

type AttributeValue = { S?: string; N?: string; BOOL?: boolean; NULL?: boolean };

/** An item's row as a feed reads it: counts (absent if never counted) and settings (absent if never set). */
export type CentralRow = {
  counts?: { counts: Counts; seq: number; countedAt: number };
  settings?: ItemSettings;
};

function centralRow(raw: Record<string, AttributeValue>): CentralRow {
  const row: CentralRow = {};
  if (raw.seq?.N !== undefined) {
    const counts = zeroCounts();
    for (const counter of COUNTER_TYPES) counts[counter] = Number(raw[counter]?.N ?? 0);
    row.counts = { counts, seq: Number(raw.seq.N), countedAt: Number(raw.counted_at?.N ?? 0) };
  }
  if (raw.visibility?.S !== undefined) {
    row.settings = { owner: raw.owner?.S ?? null, visibility: raw.visibility.S as Visibility, hideCounts: raw.hide_counts?.BOOL === true };
  }
  return row;
}

/** "stale": the store already held something at least as new; for an idempotent writer that is success. */
export type WriteOutcome = "written" | "stale";

/** `liked_at`: ms since the epoch while the edge is liked, null once unliked (or never timed). */
export type StoredEdge = { state: number; version: number; liked_at: number | null };

/**
 * The conditional write of one edge. `liked_at` is set while the edge is
 * liked and removed once it is not, which keeps the likers index sparse; an
 * edge emitted before edges kept their time leaves it as it was.
 */
function edgeUpdate(table: string, key: Record<string, { S: string }>, [, , state, inc, seq, at]: EmittedEdge, onlyOverExisting = false): Record<string, unknown> {
  const names: Record<string, string> = { "#state": "state", "#version": "version" };
  const values: Record<string, { N: string }> = { ":state": { N: String(state) }, ":version": { N: String(edgeVersion(inc, seq)) } };
  let update = "SET #state = :state, #version = :version";
  if (at !== undefined) {
    names["#liked_at"] = "liked_at";
    if (state === 1) {
      values[":liked_at"] = { N: String(at) };
      update += ", #liked_at = :liked_at";
    } else {
      update += " REMOVE #liked_at";
    }
  }
  return {
    TableName: table,
    Key: key,
    UpdateExpression: update,
    ConditionExpression: onlyOverExisting ? "attribute_exists(#version) AND #version < :version" : "attribute_not_exists(#version) OR #version < :version",
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

/**
 * The central store: ScyllaDB through Alternator. `<prefix>counters` holds
 * each item's counts and snapshot sequence; `<prefix>user_likes` each edge's
 * state, version and `liked_at`, by user; `<prefix>item_likes` the same
 * edges by item, whose index `by_liked_at` lists an item's likers in time
 * order (sparse: an edge leaves it when unliked). Every write is a conditional UpdateItem that sets
 * absolute values only when newer, never an ADD: delivery is at least once,
 * and an increment replayed by a redelivery would count twice.
 */
export class CentralStore {
  readonly #db: Alternator;
  readonly counters: string;
  readonly userLikes: string;
  readonly itemLikes: string;

  constructor(db: Alternator, prefix: string) {
    this.#db = db;
    this.counters = `${prefix}counters`;
    this.userLikes = `${prefix}user_likes`;
    this.itemLikes = `${prefix}item_likes`;
  }

  async writeSnapshot(item: string, snapshot: CountSnapshot): Promise<WriteOutcome> {
    const names: Record<string, string> = { "#seq": "seq", "#counted_at": "counted_at" };
    const values: Record<string, { N: string }> = { ":seq": { N: String(snapshot.seq) }, ":counted_at": { N: String(snapshot.at ?? 0) } };
    for (const counter of COUNTER_TYPES) {
      names[`#${counter}`] = counter;
      values[`:${counter}`] = { N: String(snapshot.counts[counter]) };
    }
    return await this.#conditional({
      TableName: this.counters,
      Key: { item: { S: item } },
      UpdateExpression: `SET ${[...COUNTER_TYPES, "seq", "counted_at"].map((a) => `#${a} = :${a}`).join(", ")}`,
      ConditionExpression: "attribute_not_exists(#seq) OR #seq < :seq",
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    });
  }

  /**
   * Both directions of one edge, each written only if newer. Each write is
   * idempotent on its own, so a redelivery after one of them failed
   * completes the other; "stale" only when neither needed writing.
   */
  async writeEdge(item: string, edge: EmittedEdge): Promise<WriteOutcome> {
    return await this.#writeEdge(item, edge, false);
  }

  /**
   * A rebuild's write of an edge copied from its user's object: as the
   * pipeline writes it, except that an edge not liked only overwrites a row
   * the store holds, so a store rebuilt from nothing holds no rows for likes
   * that were undone (the pipeline's unlike of them may never have reached it).
   */
  async rebuildEdge(item: string, edge: EmittedEdge): Promise<WriteOutcome> {
    return await this.#writeEdge(item, edge, edge[2] === 0);
  }

  async #writeEdge(item: string, edge: EmittedEdge, onlyOverExisting: boolean): Promise<WriteOutcome> {
    const [user, counter] = edge;
    const edgeKey = `${item}:${counter}`;
    const [byUser, byItem] = await Promise.all([
      this.#conditional(edgeUpdate(this.userLikes, { user: { S: user }, item: { S: edgeKey } }, edge, onlyOverExisting)),
      this.#conditional(edgeUpdate(this.itemLikes, { item: { S: edgeKey }, user: { S: user } }, edge, onlyOverExisting)),
    ]);
    return byUser === "written" || byItem === "written" ? "written" : "stale";
  }

  /**
   * One page of the distinct users holding edges, by a scan of the user-to-items
   * table (for a backfill of the index of users); `after` is the previous
   * page's last key, and none is returned at the end of the table.
   */
  async scanUsers(after: Record<string, { S: string }> | undefined, limit: number): Promise<{ users: string[]; after?: Record<string, { S: string }> }> {
    const page = await withRetries(() =>
      this.#db.call<{ Items?: { user?: { S?: string } }[]; LastEvaluatedKey?: Record<string, { S: string }> }>("Scan", {
        TableName: this.userLikes,
        ProjectionExpression: "#user",
        ExpressionAttributeNames: { "#user": "user" },
        Limit: limit,
        ...(after ? { ExclusiveStartKey: after } : {}),
      }),
    );
    const users = [...new Set((page.Items ?? []).flatMap(({ user }) => (user?.S ? [user.S] : [])))];
    return { users, ...(page.LastEvaluatedKey ? { after: page.LastEvaluatedKey } : {}) };
  }

  /**
   * An item's likers of one counter, newest first, after `after` (its
   * liked_at and user): one consistent Query of the time index, which holds
   * only edges liked now. `more` when the store says the index goes on.
   */
  async likersPage(
    item: string,
    counter: string,
    after: { at: number; user: string } | null,
    limit: number,
  ): Promise<{ likers: { user: string; at: number }[]; more: boolean }> {
    const key = `${item}:${counter}`;
    const page = await withRetries(() =>
      this.#db.call<{ Items?: { user?: { S?: string }; liked_at?: { N?: string } }[]; LastEvaluatedKey?: unknown }>("Query", {
        TableName: this.itemLikes,
        IndexName: ITEM_LIKES_BY_TIME,
        KeyConditionExpression: "#item = :item",
        ExpressionAttributeNames: { "#item": "item" },
        ExpressionAttributeValues: { ":item": { S: key } },
        ScanIndexForward: false,
        ConsistentRead: true,
        Limit: limit,
        ...(after ? { ExclusiveStartKey: { item: { S: key }, user: { S: after.user }, liked_at: { N: String(after.at) } } } : {}),
      }),
    );
    const likers = (page.Items ?? []).flatMap(({ user, liked_at }) => (user?.S && liked_at?.N ? [{ user: user.S, at: Number(liked_at.N) }] : []));
    return { likers, more: page.LastEvaluatedKey !== undefined };
  }

  /**
   * Deletes the next `limit` of a user's edges from both tables (an account
   * deletion); resolves with how many went, 0 once none is left. The
   * item-to-likers row goes first: until its user-to-items row goes too, the
   * next call finds the edge again, so a call cut off midway loses nothing.
   */
  async forgetUser(user: string, limit: number): Promise<number> {
    const page = await withRetries(() =>
      this.#db.call<{ Items?: { item?: { S?: string } }[] }>("Query", {
        TableName: this.userLikes,
        KeyConditionExpression: "#user = :user",
        ProjectionExpression: "#item",
        ExpressionAttributeNames: { "#user": "user", "#item": "item" },
        ExpressionAttributeValues: { ":user": { S: user } },
        ConsistentRead: true,
        Limit: limit,
      }),
    );
    const keys = (page.Items ?? []).flatMap(({ item }) => (item?.S ? [item.S] : []));
    for (const key of keys) {
      await withRetries(() => this.#db.call("DeleteItem", { TableName: this.itemLikes, Key: { item: { S: key }, user: { S: user } } }));
      await withRetries(() => this.#db.call("DeleteItem", { TableName: this.userLikes, Key: { user: { S: user }, item: { S: key } } }));
    }
    if (keys.length > 0) metrics.count("central_store_writes_total", { outcome: "deleted" }, keys.length * 2);
    return keys.length;
  }

  /**
   * An item's privacy settings on its counts row (attributes of their own,
   * so a settings write and a count write never overwrite each other), only
   * if at least as new as the stored ones (as D1's row is written): what lets a feed read counts and settings
   * of items spread over many databases in one request (readFeed).
   */
  async writeSettings(item: string, settings: ItemSettings, at: number): Promise<WriteOutcome> {
    return await this.#conditional({
      TableName: this.counters,
      Key: { item: { S: item } },
      UpdateExpression: "SET #owner = :owner, #visibility = :visibility, #hide = :hide, #settings_at = :at",
      ConditionExpression: "attribute_not_exists(#settings_at) OR #settings_at <= :at",
      ExpressionAttributeNames: { "#owner": "owner", "#visibility": "visibility", "#hide": "hide_counts", "#settings_at": "settings_at" },
      ExpressionAttributeValues: {
        ":owner": settings.owner === null ? { NULL: true } : { S: settings.owner },
        ":visibility": { S: settings.visibility },
        ":hide": { BOOL: settings.hideCounts },
        ":at": { N: String(at) },
      },
    });
  }

  /**
   * Up to 100 items' counts and settings in one BatchGetItem (one round trip
   * whatever the number of count databases). Eventually consistent: a feed
   * is. `unprocessed`: keys the store left for another request.
   */
  async readFeed(items: readonly string[]): Promise<{ rows: Map<string, CentralRow>; unprocessed: string[] }> {
    type Answer = { Responses?: Record<string, Record<string, AttributeValue>[]>; UnprocessedKeys?: Record<string, { Keys?: { item?: { S?: string } }[] }> };
    const answer = await this.#db.call<Answer>("BatchGetItem", {
      RequestItems: { [this.counters]: { Keys: items.map((item) => ({ item: { S: item } })) } },
    });
    const rows = new Map<string, CentralRow>();
    for (const raw of answer.Responses?.[this.counters] ?? []) {
      const item = raw.item?.S;
      if (item) rows.set(item, centralRow(raw));
    }
    const unprocessed = (answer.UnprocessedKeys?.[this.counters]?.Keys ?? []).flatMap(({ item }) => (item?.S ? [item.S] : []));
    return { rows, unprocessed };
  }

  /**
   * Many items' counts, consistent reads, in one BatchGetItem per 100 keys
   * (keys the store leaves for another request are asked again): what a
   * check of many items reads instead of a GetItem each. An item never
   * counted maps to null.
   */
  async readManyCounts(items: readonly string[]): Promise<Map<string, { seq: number; counts: Counts } | null>> {
    type Answer = { Responses?: Record<string, Record<string, AttributeValue>[]>; UnprocessedKeys?: Record<string, { Keys?: { item?: { S?: string } }[] }> };
    const found = new Map<string, { seq: number; counts: Counts } | null>(items.map((item) => [item, null]));
    let left = [...items];
    while (left.length > 0) {
      const asked = left.slice(0, 100);
      const answer = await withRetries(() =>
        this.#db.call<Answer>("BatchGetItem", {
          RequestItems: { [this.counters]: { Keys: asked.map((item) => ({ item: { S: item } })), ConsistentRead: true } },
        }),
      );
      for (const raw of answer.Responses?.[this.counters] ?? []) {
        const counts = centralRow(raw).counts;
        if (raw.item?.S && counts) found.set(raw.item.S, { seq: counts.seq, counts: counts.counts });
      }
      const unprocessed = (answer.UnprocessedKeys?.[this.counters]?.Keys ?? []).flatMap(({ item }) => (item?.S ? [item.S] : []));
      left = [...unprocessed, ...left.slice(asked.length)];
    }
    return found;
  }

  async readCounts(item: string): Promise<{ seq: number; counts: Counts } | null> {
    const { Item } = await withRetries(() =>
      this.#db.call<{ Item?: Record<string, { N?: string }> }>("GetItem", {
        TableName: this.counters,
        Key: { item: { S: item } },
        ConsistentRead: true,
      }),
    );
    // A row with settings and no counts yet: the item was never counted.
    if (!Item?.seq) return null;
    const counts = zeroCounts();
    for (const counter of COUNTER_TYPES) counts[counter] = Number(Item[counter]?.N ?? 0);
    return { seq: Number(Item.seq.N ?? 0), counts };
  }

  async readEdge(user: string, item: string, counter: string): Promise<StoredEdge | null> {
    return await this.#readEdge(this.userLikes, { user: { S: user }, item: { S: `${item}:${counter}` } });
  }

  /** The same edge as the item-to-likers table holds it. */
  async readItemEdge(user: string, item: string, counter: string): Promise<StoredEdge | null> {
    return await this.#readEdge(this.itemLikes, { item: { S: `${item}:${counter}` }, user: { S: user } });
  }

  async #readEdge(table: string, key: Record<string, { S: string }>): Promise<StoredEdge | null> {
    const { Item } = await withRetries(() =>
      this.#db.call<{ Item?: Record<string, { N?: string }> }>("GetItem", { TableName: table, Key: key, ConsistentRead: true }),
    );
    if (!Item) return null;
    const likedAt = Item.liked_at?.N;
    return { state: Number(Item.state?.N), version: Number(Item.version?.N), liked_at: likedAt === undefined ? null : Number(likedAt) };
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
