import { config } from "../../shared/config";
import { breakerFor } from "./breakers";
import { Alternator, AlternatorError } from "./alternator";
import { CentralStore, ITEM_LIKES_BY_TIME } from "./central-store";

export { ITEM_LIKES_BY_TIME } from "./central-store";

/**
 * Alternator must serialise each conditional write with other writes to the
 * same item (see docs/pipeline.md); tables plaudit creates say so themselves.
 */
const WRITE_ISOLATION = { Key: "system:write_isolation", Value: "only_rmw_uses_lwt" };
const ACTIVE_POLLS = 50;
const ACTIVE_POLL_MS = 100;

/** Per isolate: tables are checked once, not on every batch. */
const ready = new Map<string, Promise<void>>();

/**
 * The central store as a reader uses it: no table check, so a feed's read is
 * its one request (a missing table fails that request, and the reader falls
 * back); null when ALTERNATOR_ENDPOINT is empty (the store is off).
 */
export function centralReader(env: Env): CentralStore | null {
  const db = client(env);
  return db ? new CentralStore(db, config(env).ALTERNATOR_TABLE_PREFIX) : null;
}

function client(env: Env): Alternator | null {
  const settings = config(env);
  const { ALTERNATOR_ENDPOINT: endpoint, ALTERNATOR_REGION: region } = settings;
  if (!endpoint) return null;
  return new Alternator(
    {
      endpoint,
      region,
      accessKeyId: env.ALTERNATOR_ACCESS_KEY_ID ?? "plaudit",
      secretAccessKey: env.ALTERNATOR_SECRET_ACCESS_KEY ?? "plaudit",
      timeoutMs: settings.CENTRAL_STORE_TIMEOUT_MS,
    },
    breakerFor(env, { dependency: "central_store", endpoint }),
  );
}

/** The central store, its tables created on first use; null when ALTERNATOR_ENDPOINT is empty (the store is off). */
export async function centralStore(env: Env): Promise<CentralStore | null> {
  const { ALTERNATOR_ENDPOINT: endpoint, ALTERNATOR_TABLE_PREFIX: prefix } = config(env);
  const db = client(env);
  if (!db) return null;
  const store = new CentralStore(db, prefix);
  const key = `${endpoint}|${store.counters}`;
  let tables = ready.get(key);
  if (!tables) {
    tables = ensureTables(db, store);
    ready.set(key, tables);
    tables.catch(() => ready.delete(key));
  }
  await tables;
  return store;
}

async function ensureTables(db: Alternator, store: CentralStore): Promise<void> {
  await Promise.all([
    ensureTable(db, store.counters, [{ AttributeName: "item", KeyType: "HASH" }]),
    ensureTable(db, store.userLikes, [
      { AttributeName: "user", KeyType: "HASH" },
      { AttributeName: "item", KeyType: "RANGE" },
    ]),
    ensureTable(
      db,
      store.itemLikes,
      [
        { AttributeName: "item", KeyType: "HASH" },
        { AttributeName: "user", KeyType: "RANGE" },
      ],
      {
        AttributeDefinitions: [{ AttributeName: "liked_at", AttributeType: "N" }],
        LocalSecondaryIndexes: [
          {
            IndexName: ITEM_LIKES_BY_TIME,
            KeySchema: [
              { AttributeName: "item", KeyType: "HASH" },
              { AttributeName: "liked_at", KeyType: "RANGE" },
            ],
            Projection: { ProjectionType: "KEYS_ONLY" },
          },
        ],
      },
    ),
  ]);
}

type KeySchema = { AttributeName: string; KeyType: "HASH" | "RANGE" }[];
type Indexes = { AttributeDefinitions: { AttributeName: string; AttributeType: "N" | "S" }[]; LocalSecondaryIndexes: unknown[] };

async function ensureTable(db: Alternator, name: string, keys: KeySchema, indexes?: Indexes): Promise<void> {
  if ((await describe(db, name)) === "ACTIVE") return;
  try {
    await db.call("CreateTable", {
      TableName: name,
      KeySchema: keys,
      AttributeDefinitions: [
        ...keys.map(({ AttributeName }) => ({ AttributeName, AttributeType: "S" })),
        ...(indexes?.AttributeDefinitions ?? []),
      ],
      ...(indexes ? { LocalSecondaryIndexes: indexes.LocalSecondaryIndexes } : {}),
      BillingMode: "PAY_PER_REQUEST",
      Tags: [WRITE_ISOLATION],
    });
  } catch (error) {
    // Another isolate created it first.
    if (!(error instanceof AlternatorError && error.type === "ResourceInUseException")) throw error;
  }
  for (let poll = 0; poll < ACTIVE_POLLS; poll++) {
    if ((await describe(db, name)) === "ACTIVE") return;
    await new Promise((resolve) => setTimeout(resolve, ACTIVE_POLL_MS));
  }
  throw new Error(`central store table ${name} did not become active`);
}

async function describe(db: Alternator, name: string): Promise<string | null> {
  try {
    const { Table } = await db.call<{ Table?: { TableStatus?: string } }>("DescribeTable", { TableName: name });
    return Table?.TableStatus ?? null;
  } catch (error) {
    if (error instanceof AlternatorError && error.type === "ResourceNotFoundException") return null;
    throw error;
  }
}
