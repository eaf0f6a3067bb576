import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import {
  BROKER,
  INSPECTOR_BACKLOG,
  INSPECTOR_PROXY,
  MINIFLARE,
  SQLITE_HEAP_GATE,
  patchBroker,
  patchInspectorProxy,
  patchMiniflare,
} from "../../scripts/patch-local-runtime.mjs";

const enqueue = (send: string) =>
  ["  #enqueue(messages, globalDelay = 0) {", "    for (let message of messages) {", "      let fn = () => {", "        this.#messages.push(msg);", `      }, delay = message.delaySecs ?? globalDelay;`, `      ${send}`, "    }", "  }"].join("\n");

const onRuntimeMessage = (...body: string[]) =>
  ["  handleRuntimeIncomingMessage = (event) => {", "    const msg = JSON.parse(event.data);", ...body, "  };"].join("\n");
const BUFFER = "    this.runtimeMessageBuffer.push(msg);";
const DRAIN = "    this.tryDrainRuntimeMessageBuffer();";

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

describe("the install step's bound on wrangler dev's inspector backlog", () => {
  it("is in the installed inspector proxy", () => {
    const installed = readFileSync(INSPECTOR_PROXY, "utf8");
    expect(installed).toContain(`this.runtimeMessageBuffer.length > ${INSPECTOR_BACKLOG}) this.runtimeMessageBuffer.shift();`);
    expect(patchInspectorProxy(installed)).toBe(installed);
  });

  it("keeps the latest messages while no DevTools is attached, once, and leaves code it does not know alone", () => {
    const patched = patchInspectorProxy(onRuntimeMessage(BUFFER, DRAIN));
    expect(patched).not.toBeNull();
    expect(patchInspectorProxy(patched!)).toBe(patched);
    expect(patchInspectorProxy(onRuntimeMessage(DRAIN, BUFFER))).toBeNull();

    // The patched handler, run as the proxy runs it: 3,000 messages with no DevTools, then one attaches.
    const Proxy = new Function(
      `return class { websockets = {}; runtimeMessageBuffer = []; sent = [];
        tryDrainRuntimeMessageBuffer() { if (this.websockets.devtools) this.sent.push(...this.runtimeMessageBuffer.splice(0)); }
        ${patched!.replace("  handleRuntimeIncomingMessage = (event) => {", "handleRuntimeIncomingMessage = (event) => {")} }`,
    )();
    const proxy = new Proxy();
    for (let i = 0; i < 3000; i++) proxy.handleRuntimeIncomingMessage({ data: JSON.stringify({ method: "Network.requestWillBeSent", params: { i } }) });
    expect(proxy.runtimeMessageBuffer).toHaveLength(INSPECTOR_BACKLOG);
    expect(proxy.runtimeMessageBuffer[0].params.i).toBe(3000 - INSPECTOR_BACKLOG);
    proxy.websockets.devtools = {};
    for (let i = 3000; i < 5000; i++) proxy.handleRuntimeIncomingMessage({ data: JSON.stringify({ method: "Runtime.consoleAPICalled", params: { i } }) });
    // Attached, nothing is dropped: the backlog and every later message reach it in order.
    expect(proxy.sent).toHaveLength(INSPECTOR_BACKLOG + 2000);
    expect(proxy.sent.map((m: { params: { i: number } }) => m.params.i)).toEqual(Array.from({ length: INSPECTOR_BACKLOG + 2000 }, (_, k) => 3000 - INSPECTOR_BACKLOG + k));
  });
});

describe("the install step's raise of workerd's SQLite heap limit", () => {
  const assembled = (...fields: string[]) => ["    return {", "      services: servicesArray,", "      sockets,", ...fields, "    };"].join("\n");
  const LOGGING = "      structuredLogging: this.#structuredWorkerdLogs";

  it("is in the installed miniflare: the runtime it starts gets the gate", () => {
    const installed = readFileSync(MINIFLARE, "utf8");
    expect(installed).toContain(`autogates: ["${SQLITE_HEAP_GATE}"]`);
    expect(patchMiniflare(installed)).toBe(installed);
  });

  it("adds the gate to the assembled config once, and leaves code it does not know alone", () => {
    const patched = patchMiniflare(assembled("      extensions,", LOGGING));
    expect(patched).toBe(assembled("      extensions,", `      autogates: ["${SQLITE_HEAP_GATE}"],`, LOGGING));
    expect(patchMiniflare(patched!)).toBe(patched);
    expect(patchMiniflare(assembled(LOGGING, "      extensions,"))).toBeNull();
  });

  it("names a gate the pinned workerd has: it ignores one it does not know", () => {
    const gate = SQLITE_HEAP_GATE.replace(/^workerd-autogate-/, "");
    expect(gate).not.toBe(SQLITE_HEAP_GATE);
    // The workerd package's default export is the path of this platform's binary.
    const binary = readFileSync((createRequire(import.meta.url)("workerd") as { default: string }).default);
    expect(binary.includes(Buffer.from(gate))).toBe(true);
  });
});
