import { fnv1a } from "./hash";

/**
 * Which D1 database holds an item's counts: FNV-1a of the item key
 * (`post:123`), modulo K. Pure, so the aggregator that writes a row and every
 * reader that looks for it agree.
 * WARNING: never change this function on a live deployment: an item whose
 * database changes reads as zeros until its row is copied over.
 */
export function countDatabaseIndex(item: string, databases: number): number {
  return fnv1a(item) % databases;
}

/** The binding name of database i: `DB` first (it also holds the reconciliation runs), then `DB_1`, `DB_2`, ... */
export function countDatabaseBinding(index: number): string {
  return index === 0 ? "DB" : `DB_${index}`;
}
