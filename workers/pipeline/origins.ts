import type { Origin } from "../../shared/emissions";

/** What an emitting object exposes to the aggregator. */
export type EmissionAcker = { ackEmissions(emissions: readonly string[]): void | Promise<void> };

/**
 * The object that emitted a message, reached through the binding its origin
 * names (ITEM_COUNTER for heads, ITEM_SHARD for hot items' children); null if
 * this Worker has no such binding.
 */
export function originStub(env: Env, origin: Origin): { ackEmissions(emissions: readonly string[]): Promise<unknown> } | null {
  const namespace = (env as unknown as Record<string, DurableObjectNamespace<EmissionAcker & Rpc.DurableObjectBranded> | undefined>)[
    origin.ns
  ];
  if (!namespace) return null;
  return namespace.get(namespace.idFromName(origin.name));
}
