import type { Origin } from "../../shared/emissions";
import { counted, type ObjectLabel } from "../../durable-objects/lib/object-calls";

/** What an emitting object exposes to the aggregator. */
export type EmissionAcker = { ackEmissions(emissions: readonly string[]): void | Promise<void> };

const LABELS: Record<string, ObjectLabel> = { ITEM_COUNTER: "item_counter", ITEM_SHARD: "item_shard" };

/**
 * The object that emitted a message, reached through the binding its origin
 * names (ITEM_COUNTER for heads, ITEM_SHARD for hot items' children); null if
 * this Worker has no such binding.
 */
export function originStub(env: Env, origin: Origin): { ackEmissions(emissions: readonly string[]): Promise<unknown> } | null {
  const namespace = (env as unknown as Record<string, DurableObjectNamespace<EmissionAcker & Rpc.DurableObjectBranded> | undefined>)[
    origin.ns
  ];
  const label = LABELS[origin.ns];
  if (!namespace || !label) return null;
  return counted(env, namespace.get(namespace.idFromName(origin.name)), "aggregator", label);
}
