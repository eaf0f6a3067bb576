import type { ReshardRequest, ReshardResponse } from "./reshard";

/**
 * Drives a reshard to its end: calls the step (`send`) until the phase is
 * `done`, sleeping whatever the service asks between phases. It keeps no
 * state of its own (the service stores where the reshard stands), so a
 * runner killed anywhere is resumed by running it again.
 */
export async function runReshard(options: {
  databases: number;
  limit: number;
  send: (request: ReshardRequest) => Promise<ReshardResponse>;
  sleep: (ms: number) => Promise<void>;
  onProgress?: (step: ReshardResponse) => void;
}): Promise<ReshardResponse & { steps: number }> {
  for (let steps = 1; ; steps++) {
    const step = await options.send({ databases: options.databases, limit: options.limit });
    options.onProgress?.(step);
    if (step.phase === "done") return { ...step, steps };
    if (step.wait_ms > 0) await options.sleep(step.wait_ms);
  }
}
