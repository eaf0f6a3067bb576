// A live-counts socket as the tests and the bench use it: opens
// `GET /v1/live`, subscribes, and keeps the newest counts it was sent per item.
import WebSocket from "ws";

type ItemCounts = { likes: number; views: number; shares: number; saves: number };

export type LiveSocket = {
  /** The newest counts received per item key. */
  latest: Map<string, ItemCounts>;
  /** When each item's likes first reached a value (ms since the epoch), for fan-out timing. */
  reachedAt: Map<string, number>;
  subscribe(items: readonly string[]): Promise<string[]>;
  /** Resolves when `check` holds for the counts received, or rejects after `timeoutMs`. */
  until(check: (latest: Map<string, ItemCounts>) => boolean, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
};

const ref = (key: string) => ({ item_type: key.slice(0, key.indexOf(":")), item_id: key.slice(key.indexOf(":") + 1) });

export async function openLive(baseUrl: string, timeoutMs = 30_000): Promise<LiveSocket> {
  const ws = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/v1/live`);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("live socket did not open")), timeoutMs);
    ws.once("open", () => (clearTimeout(timer), resolve()));
    ws.once("error", (error) => (clearTimeout(timer), reject(error)));
  });
  const latest = new Map<string, ItemCounts>();
  const reachedAt = new Map<string, number>();
  const waiters = new Set<() => void>();
  let subscribed: { resolve: (items: string[]) => void; reject: (error: Error) => void } | null = null;
  let failure: Error | null = null;
  ws.on("message", (data) => {
    const message = JSON.parse(String(data)) as
      | { type: "subscribed"; items: string[] }
      | { type: "counts"; counts: Record<string, ItemCounts> }
      | { type: "error"; message: string };
    if (message.type === "subscribed") subscribed?.resolve(message.items);
    else if (message.type === "counts") {
      const now = Date.now();
      for (const [item, counts] of Object.entries(message.counts)) {
        latest.set(item, counts);
        reachedAt.set(`${item}=${counts.likes}`, now);
      }
    } else {
      failure = new Error(`live error: ${message.message}`);
      subscribed?.reject(failure);
    }
    for (const wake of waiters) wake();
  });
  ws.on("close", (code) => {
    failure ??= new Error(`live socket closed (${code})`);
    subscribed?.reject(failure);
    for (const wake of waiters) wake();
  });
  return {
    latest,
    reachedAt,
    async subscribe(items) {
      const answer = new Promise<string[]>((resolve, reject) => (subscribed = { resolve, reject }));
      ws.send(JSON.stringify({ type: "subscribe", items: items.map(ref) }));
      return await withTimeout(answer, timeoutMs, "no subscribed answer");
    },
    async until(check, waitMs) {
      await withTimeout(
        new Promise<void>((resolve, reject) => {
          const test = () => {
            if (check(latest)) resolve();
            else if (failure) reject(failure);
            else return;
            waiters.delete(test);
          };
          waiters.add(test);
          test();
        }),
        waitMs,
        "the expected counts did not arrive",
      );
    },
    async close() {
      if (ws.readyState === WebSocket.CLOSED) return;
      const closed = new Promise((resolve) => ws.once("close", resolve));
      ws.close(1000);
      await withTimeout(closed, 5_000, "socket did not close").catch(() => ws.terminate());
    },
  };
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
