import { readFileSync } from "node:fs";
import http, { type Server } from "node:http";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import {
  BROKER,
  INSPECTOR_BACKLOG,
  INSPECTOR_PROXY,
  MINIFLARE,
  SQLITE_HEAP_GATE,
  TEST_POOL,
  TEST_POOL_WORKER,
  patchBroker,
  patchInspectorProxy,
  patchMiniflare,
  patchMiniflareLoopback,
  patchMiniflareSocket,
  patchTestPoolPrototype,
  patchTestPoolStrings,
} from "../../scripts/patch-local-runtime.mjs";

type Patch = (source: string) => string | null;

/** The fix is in the installed file, and applying it again changes nothing. */
function expectInstalled(path: string, patch: Patch, applied: string): void {
  const installed = readFileSync(path, "utf8");
  expect(installed).toContain(applied);
  expect(patch(installed)).toBe(installed);
}

/** Answers `pinned` patched: the fix applies, a second time changes nothing, and code it does not know (`unknown`) is left alone. */
function patchedOnce(patch: Patch, pinned: string, unknown: string): string {
  const patched = patch(pinned);
  expect(patched).not.toBeNull();
  expect(patch(patched!)).toBe(patched);
  expect(patch(unknown)).toBeNull();
  return patched!;
}

const enqueue = (send: string) =>
  ["  #enqueue(messages, globalDelay = 0) {", "    for (let message of messages) {", "      let fn = () => {", "        this.#messages.push(msg);", `      }, delay = message.delaySecs ?? globalDelay;`, `      ${send}`, "    }", "  }"].join("\n");

const onRuntimeMessage = (...body: string[]) =>
  ["  handleRuntimeIncomingMessage = (event) => {", "    const msg = JSON.parse(event.data);", ...body, "  };"].join("\n");
const BUFFER = "    this.runtimeMessageBuffer.push(msg);";
const DRAIN = "    this.tryDrainRuntimeMessageBuffer();";

describe("the install step's fix to the local Queues broker", () => {
  it("is in the installed broker: an undelayed message is enqueued at once, a delayed one keeps its timer", () => {
    expectInstalled(BROKER, patchBroker, "delay > 0 ? this.timers.setTimeout(fn, delay * 1e3) : fn();");
  });

  it("rewrites the broker's per-message timer once, and leaves code it does not know alone", () => {
    const patched = patchedOnce(patchBroker, enqueue("this.timers.setTimeout(fn, delay * 1e3);"), enqueue("queueMicrotask(fn);"));
    expect(patched).toBe(enqueue("delay > 0 ? this.timers.setTimeout(fn, delay * 1e3) : fn();"));
  });
});

describe("the install step's bound on wrangler dev's inspector backlog", () => {
  it("is in the installed inspector proxy", () => {
    expectInstalled(INSPECTOR_PROXY, patchInspectorProxy, `this.runtimeMessageBuffer.length > ${INSPECTOR_BACKLOG}) this.runtimeMessageBuffer.shift();`);
  });

  it("keeps the latest messages while no DevTools is attached, once, and leaves code it does not know alone", () => {
    const patched = patchedOnce(patchInspectorProxy, onRuntimeMessage(BUFFER, DRAIN), onRuntimeMessage(DRAIN, BUFFER));

    // The patched handler, run as the proxy runs it: 3,000 messages with no DevTools, then one attaches.
    const Proxy = new Function(
      `return class { websockets = {}; runtimeMessageBuffer = []; sent = [];
        tryDrainRuntimeMessageBuffer() { if (this.websockets.devtools) this.sent.push(...this.runtimeMessageBuffer.splice(0)); }
        ${patched.replace("  handleRuntimeIncomingMessage = (event) => {", "handleRuntimeIncomingMessage = (event) => {")} }`,
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
    expectInstalled(MINIFLARE, patchMiniflare, `autogates: ["${SQLITE_HEAP_GATE}"]`);
  });

  it("adds the gate to the assembled config once, and leaves code it does not know alone", () => {
    const patched = patchedOnce(patchMiniflare, assembled("      extensions,", LOGGING), assembled(LOGGING, "      extensions,"));
    expect(patched).toBe(assembled("      extensions,", `      autogates: ["${SQLITE_HEAP_GATE}"],`, LOGGING));
  });

  it("names a gate the pinned workerd has: it ignores one it does not know", () => {
    const gate = SQLITE_HEAP_GATE.replace(/^workerd-autogate-/, "");
    expect(gate).not.toBe(SQLITE_HEAP_GATE);
    // The workerd package's default export is the path of this platform's binary.
    const binary = readFileSync((createRequire(import.meta.url)("workerd") as { default: string }).default);
    expect(binary.includes(Buffer.from(gate))).toBe(true);
  });
});

describe("the install step's keep-alive for miniflare's loopback server", () => {
  // The method as the pinned miniflare has it.
  const START = `  #startLoopbackServer(hostname) {
    if (hostname === "*") hostname = "::";
    return new Promise((resolve6) => {
      const server = (0, import_stoppable.default)(
        import_node_http2.default.createServer(this.#handleLoopback),
        /* grace */
        0
      );
      server.on("upgrade", this.#handleLoopbackUpgrade);
      server.listen(0, hostname, () => resolve6(server));
    });
  }`;
  /** The server `method` starts, built with Node's own http module, answering every request "ok". */
  const startWith = (method: string): Promise<Server> => {
    const Loopback = new Function(
      "import_node_http2",
      "import_stoppable",
      `return class { #handleLoopback = (req, res) => res.end("ok"); #handleLoopbackUpgrade = () => {};\n${method}\n start() { return this.#startLoopbackServer("127.0.0.1"); } }`,
    )({ default: http }, { default: (server: Server) => server });
    return new Loopback().start();
  };

  it("is in the installed miniflare", () => {
    expectInstalled(MINIFLARE, patchMiniflareLoopback, '      server.keepAliveTimeout = 0;\n      server.on("upgrade", this.#handleLoopbackUpgrade);');
  });

  it("keeps idle connections open where Node's default closes them after 5 s, once, and leaves code it does not know alone", async () => {
    const patched = patchedOnce(patchMiniflareLoopback, START, START.replace("server.listen(0, hostname,", "server.listen(8787, hostname,"));
    for (const [method, timeout] of [[START, 5_000], [patched, 0]] as const) {
      const server = await startWith(method);
      try {
        const { port } = server.address() as { port: number };
        expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe("ok");
        expect(server.keepAliveTimeout).toBe(timeout);
      } finally {
        server.closeAllConnections();
        await new Promise((done) => server.close(done));
      }
    }
  });
});

describe("the install step's uncompressed sockets from miniflare to its runtime", () => {
  const opening = (...options: string[]) =>
    ["    const ws = new import_ws2.default(url38, protocols, {", ...options, "      headers: Object.fromEntries(headers.entries()),", "    });"].join("\n");
  const FOLLOW = '      followRedirects: request4.redirect === "follow",';

  it("is in the installed miniflare", () => {
    expectInstalled(MINIFLARE, patchMiniflareSocket, `perMessageDeflate: false,\n${FOLLOW}`);
  });

  it("turns compression off once, and leaves code it does not know alone", () => {
    const patched = patchedOnce(patchMiniflareSocket, opening(FOLLOW), opening("      followRedirects: true,"));
    expect(patched).toBe(opening("      perMessageDeflate: false,", FOLLOW));
  });
});

describe("the install step's native string escaping in the test pool", () => {
  // devalue's escaping as the pinned pool has it, with the helper it calls.
  const ESCAPER = `function get_escaped_char(char) {
\tswitch (char) {
\t\tcase "\\"": return "\\\\\\"";
\t\tcase "<": return "\\\\u003C";
\t\tcase "\\\\": return "\\\\\\\\";
\t\tcase "\\n": return "\\\\n";
\t\tcase "\\r": return "\\\\r";
\t\tcase "\\t": return "\\\\t";
\t\tcase "\\b": return "\\\\b";
\t\tcase "\\f": return "\\\\f";
\t\tcase "\\u2028": return "\\\\u2028";
\t\tcase "\\u2029": return "\\\\u2029";
\t\tdefault: return char < " " ? \`\\\\u\${char.charCodeAt(0).toString(16).padStart(4, "0")}\` : "";
\t}
}
function stringify_string(str) {
\tlet result = "";
\tlet last_pos = 0;
\tconst len = str.length;
\tfor (let i = 0; i < len; i += 1) {
\t\tconst char = str[i];
\t\tconst replacement = get_escaped_char(char);
\t\tif (replacement) {
\t\t\tresult += str.slice(last_pos, i) + replacement;
\t\t\tlast_pos = i + 1;
\t\t}
\t}
\treturn \`"\${last_pos === 0 ? str : result + str.slice(last_pos)}"\`;
}`;
  const compile = (source: string) => new Function(`${source}\nreturn stringify_string;`)() as (str: string) => string;
  const SAMPLES = ["", "plain", 'a "quoted" <b>\\path\\</b>', "lines\n\r\ttabs\b\f\u0001\u001f", "sep\u2028par\u2029", "lone \ud800 surrogate", "é ☃ 👍"];

  it("is in the installed pool", () => {
    expectInstalled(TEST_POOL, patchTestPoolStrings, "function stringify_string(str) {\n\treturn JSON.stringify(str)");
  });

  it("escapes so that every string reads back the same as with devalue's own escaping, once, and leaves code it does not know alone", () => {
    const patched = patchedOnce(patchTestPoolStrings, ESCAPER, ESCAPER.replace('\tlet result = "";', '\tlet out = "";'));
    const [original, native] = [compile(ESCAPER), compile(patched)];
    for (const sample of SAMPLES) {
      expect(JSON.parse(original(sample))).toBe(sample);
      expect(JSON.parse(native(sample))).toBe(sample);
      // What devalue escapes beyond JSON stays escaped: the output can sit inside a <script> and a JavaScript string.
      expect(native(sample)).not.toMatch(/[<\u2028\u2029]/);
    }
    expect(native('x<y')).toBe(original('x<y'));
  });
});

describe("the install step's prototype proxy, installed once, in the test pool's wrappers", () => {
  // The wrapper as the pinned pool has it.
  const WRAPPER = `const IGNORED_KEYS = ["self"];
function createProxyPrototypeClass(superClass, getUnknownPrototypeKey) {
\tfunction Class(...args) {
\t\tClass.prototype = new Proxy(Class.prototype, { get(target, key, receiver) {
\t\t\tconst value = Reflect.get(target, key, receiver);
\t\t\tif (value !== void 0) return value;
\t\t\tif (typeof key === "symbol" || IGNORED_KEYS.includes(key)) return;
\t\t\treturn getUnknownPrototypeKey.call(receiver, key);
\t\t} });
\t\treturn Reflect.construct(superClass, args, Class);
\t}
\tReflect.setPrototypeOf(Class.prototype, superClass.prototype);
\tReflect.setPrototypeOf(Class, superClass);
\treturn Class;
}`;
  type Wrapped = new (name: string) => { name: string; greet(): string; rpc: string; self: unknown; [k: symbol]: unknown };
  /** The wrapper compiled from `source` around a plain class (in place of DurableObject), whose unknown keys answer `rpc:<key>`. */
  const wrap = (source: string): Wrapped => {
    const create = new Function(`${source}\nreturn createProxyPrototypeClass;`)() as (base: unknown, unknown: (key: string) => unknown) => Wrapped;
    class Base {
      constructor(readonly name: string) {}
      greet() {
        return `hello ${this.name}`;
      }
    }
    return create(Base, (key) => `rpc:${key}`);
  };
  /** What `read` answers, and how many traps it ran: each trap reads its target with Reflect.get. */
  const traps = (read: () => unknown) => {
    const original = Reflect.get;
    let count = 0;
    Reflect.get = (...args: Parameters<typeof Reflect.get>) => {
      count++;
      return original(...args);
    };
    try {
      return [read(), count];
    } finally {
      Reflect.get = original;
    }
  };

  it("is in the installed pool", () => {
    expectInstalled(TEST_POOL_WORKER, patchTestPoolPrototype, "if (!proxied && (proxied = true)) Class.prototype = new Proxy(Class.prototype, {");
  });

  it("reads a property through one trap however many instances were made, answers as the pinned wrapper does, once, and leaves code it does not know alone", () => {
    const patched = patchedOnce(patchTestPoolPrototype, WRAPPER, WRAPPER.replace("Class.prototype = new Proxy", "Class.prototype = Object.create"));
    const made = (Wrapper: Wrapped) => Array.from({ length: 50 }, (_, i) => new Wrapper(`n${i}`));
    const [old, now] = [made(wrap(WRAPPER)), made(wrap(patched))];
    // The pinned wrapper wraps its prototype again at each construction: 50 instances, 50 traps for one read.
    expect(traps(() => old.at(-1)!.rpc)).toEqual(["rpc:rpc", 50]);
    expect(traps(() => now.at(-1)!.rpc)).toEqual(["rpc:rpc", 1]);
    expect(traps(() => now[0]!.rpc)).toEqual(["rpc:rpc", 1]);
    for (const [a, b] of [[old[7]!, now[7]!], [old[49]!, now[49]!]] as const) {
      expect([b.name, b.greet(), b.rpc, b.self, b[Symbol.for("x")]]).toEqual([a.name, a.greet(), a.rpc, a.self, a[Symbol.for("x")]]);
      expect(b.greet()).toBe(`hello ${b.name}`);
    }
  });
});
