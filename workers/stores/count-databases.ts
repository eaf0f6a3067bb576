import { config } from "../../shared/config";
import { countDatabaseBinding, countDatabaseIndex } from "../../shared/count-databases";
import { indexDatabaseIndex, userIndexDraw } from "../../shared/item-index";

/**
 * The K databases that hold the items' counts (COUNT_DATABASES), in index
 * order. A binding missing from wrangler.toml is a deployment error, said
 * plainly rather than read as an empty database.
 */
export function countDatabases(env: Env): D1Database[] {
  const bindings = env as unknown as Record<string, D1Database | undefined>;
  return Array.from({ length: config(env).COUNT_DATABASES }, (_, index) => {
    const name = countDatabaseBinding(index);
    const db = bindings[name];
    if (!db) throw new Error(`COUNT_DATABASES needs a D1 binding named ${name} in wrangler.toml`);
    return db;
  });
}

/** The database that holds this item's counts. */
export function countDatabaseFor(env: Env, item: string): D1Database {
  const databases = countDatabases(env);
  return databases[countDatabaseIndex(item, databases.length)]!;
}

/** Items grouped by the database that holds them; only databases that hold some of them appear. */
export function byCountDatabase<T>(env: Env, entries: readonly T[], item: (entry: T) => string): Map<D1Database, T[]> {
  const databases = countDatabases(env);
  // One database (npm start's default) holds everything: no item needs hashing.
  if (databases.length === 1) return new Map(entries.length > 0 ? [[databases[0]!, [...entries]]] : []);
  const groups = new Map<D1Database, T[]>();
  for (const entry of entries) {
    const db = databases[countDatabaseIndex(item(entry), databases.length)]!;
    const group = groups.get(db);
    if (group) group.push(entry);
    else groups.set(db, [entry]);
  }
  return groups;
}

/** The database that holds this item's row of the index of every item counted. */
export function indexDatabaseFor(env: Env, item: string): D1Database {
  const databases = countDatabases(env);
  return databases[indexDatabaseIndex(item, databases.length)]!;
}

/** The database that holds this user's row of the index of users. */
export function userIndexDatabaseFor(env: Env, user: string): D1Database {
  const databases = countDatabases(env);
  return databases[userIndexDraw(user) % databases.length]!;
}
