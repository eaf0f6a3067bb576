import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BROKER, patchBroker } from "../../scripts/patch-local-queue.mjs";

const enqueue = (send: string) =>
  ["  #enqueue(messages, globalDelay = 0) {", "    for (let message of messages) {", "      let fn = () => {", "        this.#messages.push(msg);", `      }, delay = message.delaySecs ?? globalDelay;`, `      ${send}`, "    }", "  }"].join("\n");

describe("the install step's fix to the local Queues broker", () => {
  it("is in the installed broker: an undelayed message is enqueued at once, a delayed one keeps its timer", () => {
    const installed = readFileSync(BROKER, "utf8");
    expect(installed).toContain("delay > 0 ? this.timers.setTimeout(fn, delay * 1e3) : fn();");
    expect(patchBroker(installed)).toBe(installed);
  });

  it("rewrites the broker's per-message timer once, and leaves code it does not know alone", () => {
    const unpatched = enqueue("this.timers.setTimeout(fn, delay * 1e3);");
    const patched = patchBroker(unpatched);
    expect(patched).toBe(enqueue("delay > 0 ? this.timers.setTimeout(fn, delay * 1e3) : fn();"));
    expect(patchBroker(patched!)).toBe(patched);
    expect(patchBroker(enqueue("queueMicrotask(fn);"))).toBeNull();
  });
});
