import type { ItemRef, LiveMessage } from "./types.js";

/** The API lets one socket watch at most this many items. */
const MAX_ITEMS = 100;
const KEEPALIVE_MS = 30_000;
const MAX_BACKOFF_MS = 30_000;

/** `likes` is null when the item's owner hides its counts from this socket's viewer. */
export type LiveListener = (key: string, likes: number | null) => void;

/**
 * One WebSocket per page to `/v1/live`, shared by every button: items are
 * subscribed while some button shows them and unsubscribed when the last one
 * leaves; the socket closes when nothing is watched and reconnects with
 * backoff when it drops. Counts are absolute, so after a reconnect the owner
 * rereads them once (`onReconnect`) to make good what was missed.
 */
export class LiveFeed {
  readonly #url: () => string;
  readonly #onCounts: LiveListener;
  readonly #onReconnect: (keys: string[]) => void;
  readonly #items = new Map<string, ItemRef>();
  #socket: WebSocket | null = null;
  #open = false;
  #attempt = 0;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #keepalive: ReturnType<typeof setInterval> | undefined;
  #added = new Set<string>();
  #removed = new Set<string>();
  #flushQueued = false;

  constructor(url: () => string, onCounts: LiveListener, onReconnect: (keys: string[]) => void) {
    this.#url = url;
    this.#onCounts = onCounts;
    this.#onReconnect = onReconnect;
  }

  watch(key: string, item: ItemRef): void {
    // Back before its unsubscribe went out (a button moved in the page): nothing to send.
    if (this.#removed.delete(key) || this.#items.has(key) || this.#items.size >= MAX_ITEMS) return;
    this.#items.set(key, item);
    this.#added.add(key);
    this.#schedule();
  }

  unwatch(key: string): void {
    if (!this.#items.has(key)) return;
    this.#added.delete(key);
    this.#removed.add(key);
    this.#schedule();
  }

  /** Batches (un)subscriptions made in one task into one message each. */
  #schedule(): void {
    if (this.#flushQueued) return;
    this.#flushQueued = true;
    queueMicrotask(() => {
      this.#flushQueued = false;
      this.#flush();
    });
  }

  #flush(): void {
    const gone = [...this.#removed].flatMap((key) => {
      const item = this.#items.get(key);
      this.#items.delete(key);
      return item ? [item] : [];
    });
    const added = [...this.#added].flatMap((key) => this.#items.get(key) ?? []);
    this.#removed.clear();
    this.#added.clear();
    if (this.#items.size === 0) return this.#close();
    if (!this.#socket) return this.#connect();
    if (!this.#open) return;
    if (gone.length) this.#send({ type: "unsubscribe", items: gone });
    if (added.length) this.#send({ type: "subscribe", items: added });
  }

  #connect(): void {
    clearTimeout(this.#retryTimer);
    const socket = new WebSocket(this.#url());
    this.#socket = socket;
    socket.onopen = () => {
      const reconnected = this.#attempt > 0;
      this.#open = true;
      this.#attempt = 0;
      this.#send({ type: "subscribe", items: [...this.#items.values()] });
      this.#keepalive = setInterval(() => socket.send("ping"), KEEPALIVE_MS);
      if (reconnected) this.#onReconnect([...this.#items.keys()]);
    };
    socket.onmessage = (event) => {
      if (typeof event.data !== "string" || event.data === "pong") return;
      const message = JSON.parse(event.data) as LiveMessage;
      if (message.type !== "counts") return;
      for (const [key, counts] of Object.entries(message.counts)) this.#onCounts(key, counts.likes);
    };
    socket.onclose = () => {
      if (this.#socket !== socket) return;
      this.#drop();
      if (this.#items.size === 0) return;
      // Full jitter, so a server restart is not met by every page at once.
      const ceiling = Math.min(MAX_BACKOFF_MS, 500 * 2 ** this.#attempt++);
      this.#retryTimer = setTimeout(() => this.#connect(), Math.random() * ceiling);
    };
  }

  #send(message: { type: "subscribe" | "unsubscribe"; items: ItemRef[] }): void {
    if (message.items.length) this.#socket?.send(JSON.stringify(message));
  }

  #drop(): void {
    clearInterval(this.#keepalive);
    this.#socket = null;
    this.#open = false;
  }

  #close(): void {
    clearTimeout(this.#retryTimer);
    const socket = this.#socket;
    this.#drop();
    this.#attempt = 0;
    socket?.close();
  }
}
