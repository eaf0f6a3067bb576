import { DurableObject } from "cloudflare:workers";
import { config } from "../shared/config";
import { liveKeys, LiveClientMessage, MAX_LIVE_FRAME_BYTES, MAX_LIVE_ITEMS, type LiveServerMessage, type LiveUpdate } from "../shared/live";
import { log } from "../shared/log";
import { ANONYMOUS, disclosure, shownCounts, type Disclosure } from "../shared/privacy";
import { backoffMs } from "../shared/retries";
import { scheduleFlush } from "../metrics/flush";
import { metrics } from "../metrics/recorder";
import { ANONYMOUS_LIVE, LIVE_VIEWER_HEADER, packAttachment, unpackAttachment, viewerAt, type LiveViewer } from "../shared/live-viewer";
import { writeRegistrations } from "./lib/live-registry";

/** Below the platform's 32,768 WebSockets per object, so a hub that says "room left" has it. */
export const MAX_SOCKETS_PER_HUB = 32_000;
/** Registry writes that fail are retried this many times, then left to the next change of the hub's items. */
const REGISTRY_ATTEMPTS = 5;

/**
 * One of the LIVE_HUBS objects that hold live sockets, over the WebSocket
 * Hibernation API: an idle hub is evicted from memory while its sockets stay
 * open, and a client's `ping` is answered by the runtime without waking it.
 *
 * What survives hibernation is each socket's attachment (its subscriptions,
 * packed, and its viewer); the item -> sockets index is rebuilt from them
 * when the hub wakes.
 * The hub keeps its rows in D1's `live_watchers` equal to the items it
 * watches, so the aggregator publishes to it only what its sockets want; the
 * rows are written before a subscription is confirmed, so a change made after
 * the confirmation reaches the socket.
 *
 * Updates are held for one tick (LIVE_TICK_MS) and sent as one message per
 * socket naming every item of its that changed; an update older than the one
 * last sent for its item (a redelivered snapshot) is dropped.
 *
 * Privacy (docs/live.md): each update carries the item's settings as the
 * publisher read them, and each socket's viewer is the one the Worker
 * verified when it opened, so the hub applies the same rule as every read,
 * per socket: an item the viewer may not see is left out of the message (as
 * an untouched item, which never changes, is), hidden counts are null.
 */
export class LiveHub extends DurableObject<Env> {
  /** Test hook: how many sockets this hub takes before it answers "full". */
  readonly limits = { maxSockets: MAX_SOCKETS_PER_HUB };
  readonly #hub: number | null;
  readonly #watchers = new Map<string, Set<WebSocket>>();
  readonly #viewers = new Map<WebSocket, LiveViewer>();
  /** Items this hub's D1 rows name (believed): after a wake, the items its sockets watch. */
  readonly #registered: Set<string>;
  readonly #lastSeq = new Map<string, number>();
  #pending = new Map<string, LiveUpdate>();
  #tick: ReturnType<typeof setTimeout> | null = null;
  #registry: Promise<boolean> = Promise.resolve(true);

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const match = /^hub:(\d+)$/.exec(ctx.id.name ?? "");
    this.#hub = match ? Number(match[1]) : null;
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
    for (const ws of ctx.getWebSockets()) {
      const { items, viewer } = unpackAttachment(ws.deserializeAttachment());
      this.#viewers.set(ws, viewer);
      for (const item of items) this.#watch(item, ws);
    }
    this.#registered = new Set(this.#watchers.keys());
  }

  /**
   * Accepts one upgraded socket with the viewer the Worker verified, or
   * answers 503 when the hub is full (the Worker then tries another hub).
   */
  override async fetch(request: Request): Promise<Response> {
    if (this.ctx.getWebSockets().length >= this.limits.maxSockets) return new Response(null, { status: 503 });
    const viewer = JSON.parse(request.headers.get(LIVE_VIEWER_HEADER) ?? "null") ?? ANONYMOUS_LIVE;
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.ctx.acceptWebSocket(server);
    server.serializeAttachment(packAttachment([], viewer));
    this.#viewers.set(server, viewer);
    return new Response(null, { status: 101, webSocket: client });
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    if ((typeof message === "string" ? new TextEncoder().encode(message) : message).byteLength > MAX_LIVE_FRAME_BYTES) {
      send(ws, { type: "error", error: "payload_too_large", message: `A message must be at most ${MAX_LIVE_FRAME_BYTES} bytes.` });
      return;
    }
    const request = parseClientMessage(message);
    if (!request.success) {
      send(ws, { type: "error", error: "invalid_request", message: "The message is not a valid subscribe or unsubscribe request.", details: request.details });
      return;
    }
    const { items, viewer } = unpackAttachment(ws.deserializeAttachment());
    const current = new Set(items);
    const keys = liveKeys(request.data.items);
    const next = new Set(current);
    for (const key of keys) (request.data.type === "subscribe" ? next.add(key) : next.delete(key));
    if (next.size > MAX_LIVE_ITEMS) {
      send(ws, { type: "error", error: "invalid_request", message: `A socket watches at most ${MAX_LIVE_ITEMS} items; unsubscribe from some first.` });
      return;
    }
    ws.serializeAttachment(packAttachment(next, viewer));
    for (const key of current) if (!next.has(key)) this.#unwatch(key, ws);
    for (const key of next) this.#watch(key, ws);
    await this.#syncRegistry();
    send(ws, { type: "subscribed", items: [...next] });
  }

  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    this.#drop(ws);
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code, "closing");
    } catch {
      // Already closed: the runtime answered the close frame itself.
    }
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    this.#drop(ws);
  }

  /**
   * The aggregator's new counts for items some hub watches. Items this hub
   * no longer watches (its sockets left, or it restarted without them) are
   * taken out of its D1 rows, so they stop costing a call.
   */
  publish(updates: readonly LiveUpdate[]): void {
    let stale = false;
    for (const update of updates) {
      if (!this.#watchers.has(update.item)) {
        this.#registered.add(update.item);
        stale = true;
      } else if (update.seq > (this.#lastSeq.get(update.item) ?? 0)) {
        this.#lastSeq.set(update.item, update.seq);
        this.#pending.set(update.item, update);
      }
    }
    if (stale) this.ctx.waitUntil(this.#syncRegistry());
    if (this.#pending.size > 0 && this.#tick === null) this.#tick = setTimeout(() => this.#flush(), config(this.env).LIVE_TICK_MS);
  }

  #flush(): void {
    this.#tick = null;
    const updates = [...this.#pending.values()];
    this.#pending = new Map();
    const bySocket = new Map<WebSocket, string[]>();
    const now = Date.now();
    for (const { item, counts, settings } of updates) {
      // An update from a publisher that sent no settings cannot be checked: withheld.
      if (!settings) continue;
      const fragments = new Map<Disclosure, string>();
      const fragment = (shown: Disclosure) =>
        fragments.get(shown) ?? fragments.set(shown, `${JSON.stringify(item)}:${JSON.stringify(shownCounts(counts, shown))}`).get(shown)!;
      const anonymous = disclosure(settings, ANONYMOUS);
      for (const ws of this.#watchers.get(item) ?? []) {
        const viewer = this.#viewers.get(ws) ?? ANONYMOUS_LIVE;
        const shown = viewer.userId === null ? anonymous : disclosure(settings, viewerAt(viewer, now));
        if (shown === "untouched") continue;
        const socketFragments = bySocket.get(ws);
        if (socketFragments) socketFragments.push(fragment(shown));
        else bySocket.set(ws, [fragment(shown)]);
      }
    }
    const asOf = new Date().toISOString();
    for (const [ws, fragments] of bySocket) {
      try {
        ws.send(`{"type":"counts","counts":{${fragments.join(",")}},"as_of":"${asOf}"}`);
      } catch {
        // A socket closing under us; its close handler drops it.
      }
    }
    metrics.count("live_messages_sent_total", {}, bySocket.size);
    scheduleFlush(this.env, this.ctx);
  }

  #watch(item: string, ws: WebSocket): void {
    const sockets = this.#watchers.get(item);
    if (sockets) sockets.add(ws);
    else this.#watchers.set(item, new Set([ws]));
  }

  #unwatch(item: string, ws: WebSocket): void {
    const sockets = this.#watchers.get(item);
    if (!sockets) return;
    sockets.delete(ws);
    if (sockets.size === 0) {
      this.#watchers.delete(item);
      this.#lastSeq.delete(item);
    }
  }

  #drop(ws: WebSocket): void {
    const before = this.#watchers.size;
    for (const item of unpackAttachment(ws.deserializeAttachment()).items) this.#unwatch(item, ws);
    this.#viewers.delete(ws);
    if (this.#watchers.size !== before) this.ctx.waitUntil(this.#syncRegistry());
  }

  /**
   * Brings the hub's D1 rows to the items it watches. Passes run one after
   * another (a later pass sees every change made before it was asked for), so
   * the rows never fall behind in a different order than the changes.
   */
  #syncRegistry(): Promise<boolean> {
    this.#registry = this.#registry.then(() => this.#registryPass(1));
    return this.#registry;
  }

  async #registryPass(attempt: number): Promise<boolean> {
    if (this.#hub === null) return false;
    const add = [...this.#watchers.keys()].filter((item) => !this.#registered.has(item));
    const remove = [...this.#registered].filter((item) => !this.#watchers.has(item));
    if (add.length === 0 && remove.length === 0) return true;
    try {
      await writeRegistrations(this.env, this.#hub, add, remove);
      for (const item of add) this.#registered.add(item);
      for (const item of remove) this.#registered.delete(item);
      scheduleFlush(this.env, this.ctx);
      return true;
    } catch (error) {
      log("error", "live_registry_failed", { hub: this.#hub, attempt, error: String(error) });
      if (attempt >= REGISTRY_ATTEMPTS) return false;
      await new Promise((resolve) => setTimeout(resolve, backoffMs(attempt, 100, 5_000)));
      return await this.#registryPass(attempt + 1);
    }
  }
}

function parseClientMessage(message: string | ArrayBuffer) {
  let body: unknown;
  try {
    body = JSON.parse(typeof message === "string" ? message : new TextDecoder().decode(message));
  } catch {
    return { success: false as const, details: [{ path: "", message: "must be JSON" }] };
  }
  const result = LiveClientMessage.safeParse(body);
  if (result.success) return { success: true as const, data: result.data };
  return {
    success: false as const,
    details: result.error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message })),
  };
}

function send(ws: WebSocket, message: LiveServerMessage): void {
  try {
    ws.send(JSON.stringify(message));
  } catch {
    // The socket closed meanwhile.
  }
}
