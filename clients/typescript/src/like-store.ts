import { PlauditClient } from "./client.js";
import { PlauditError } from "./errors.js";
import { formatCount } from "./format.js";
import { LiveFeed } from "./like-live.js";
import type { ItemRef, ItemType, LikeResult, PendingResult } from "./types.js";

/** What a button shows for one item; a new object on every change, so `useSyncExternalStore` can compare by identity. */
export type LikeState = {
  /** The likes to show: `null` while unknown or when the owner hides the count. */
  count: number | null;
  countFormatted: string | null;
  liked: boolean;
  /** A 202: the like is kept and will be applied, not yet counted. */
  pending: boolean;
  /** A change is on its way to the server. */
  busy: boolean;
  /** Why the last change was rolled back, for the user to read. */
  error: string | null;
  /** Until when (epoch ms) a 429 holds the button back. */
  blockedUntil: number;
  /** Whether the first read of the item has come back. */
  loaded: boolean;
  /** The host app gave a token: the user can press it. */
  canLike: boolean;
};

/** Returns the host app's token for the signed-in user, or nothing for a visitor; `refresh` after a 401. */
export type TokenSource = (options: { refresh: boolean }) => string | null | undefined | Promise<string | null | undefined>;

export type LikeStoreOptions = {
  /** Where the API is (default: this page's origin). */
  baseUrl?: string;
  token?: TokenSource;
};

type Entry = {
  item: ItemRef;
  watchers: Set<() => void>;
  /** What the server last said (or, before any answer, what it was read as). */
  count: number | null;
  liked: boolean;
  /** What the user asked for last; differs from `liked` while a change is unconfirmed. */
  wanted: boolean;
  inFlight: boolean;
  state: LikeState;
  pending: boolean;
  error: string | null;
  blockedUntil: number;
  loaded: boolean;
  /** The owner hides the count from this viewer. */
  hidden: boolean;
  rereads: number;
};

const MAX_BATCH = 100;
const REREAD_DELAYS_MS = [500, 2_000, 8_000];
/** Waits before resending an intent whose answer was lost; the last failure rolls back. */
const RESEND_DELAYS_MS = [300, 1_000];

export const itemKeyOf = (item: ItemRef) => `${item.item_type}:${item.item_id}`;

/** The frame after this one, or a short timer in a hidden tab (which runs no frames). */
const nextFrame = (run: () => void) =>
  typeof requestAnimationFrame === "function" && document.visibilityState === "visible" ? requestAnimationFrame(() => run()) : setTimeout(run, 16);

/**
 * Every like button on a page reads and writes through one store: items that
 * appear in the same frame are read together (one `POST /v1/counts`, one
 * `POST /v1/has_liked` per item type), live counts come over one socket, and
 * a change made in one tab reaches the user's other tabs.
 */
export class LikeStore {
  readonly #entries = new Map<string, Entry>();
  readonly #toRead = new Set<string>();
  #readQueued = false;
  #baseUrl: string;
  #tokenSource: TokenSource | undefined;
  #token: string | null = null;
  #tokenRead: Promise<void> | null = null;
  readonly #client: PlauditClient;
  readonly #live: LiveFeed;
  readonly #tabs: BroadcastChannel | null;

  constructor(options: LikeStoreOptions = {}) {
    this.#baseUrl = options.baseUrl ?? globalThis.location?.origin ?? "";
    this.#tokenSource = options.token;
    // The button retries lost answers itself (same intent), so 429s and 503s reach it at once.
    this.#client = new PlauditClient({ baseUrl: this.#baseUrl, token: () => this.#token ?? "", maxRetries: 0, timeoutMs: 8_000 });
    this.#live = new LiveFeed(() => this.#client.liveUrl(), (key, likes) => this.#onLive(key, likes), (keys) => this.#queueRead(keys));
    this.#tabs = typeof BroadcastChannel === "function" ? new BroadcastChannel(`plaudit-like:${this.#baseUrl}`) : null;
    if (this.#tabs) this.#tabs.onmessage = (event) => this.#fromTab(event.data);
  }

  /** Sets or replaces where the API is and the token source (sign-in, sign-out); every item is read again. */
  configure(options: LikeStoreOptions): void {
    if (options.baseUrl !== undefined && options.baseUrl !== this.#baseUrl) {
      throw new Error("plaudit: create a new LikeStore for another baseUrl");
    }
    this.#tokenSource = options.token;
    this.#token = null;
    this.#tokenRead = null;
    for (const entry of this.#entries.values()) this.#publish(entry);
    this.#queueRead([...this.#entries.keys()]);
  }

  /** Starts showing an item: the listener hears every change. Returns the function that stops. */
  watch(item: ItemRef, listener: () => void): () => void {
    const key = itemKeyOf(item);
    let entry = this.#entries.get(key);
    if (!entry) {
      entry = { item, watchers: new Set(), count: null, liked: false, wanted: false, inFlight: false, pending: false, error: null, blockedUntil: 0, loaded: false, hidden: false, rereads: 0, state: EMPTY };
      this.#entries.set(key, entry);
      this.#publish(entry);
      this.#queueRead([key]);
      this.#live.watch(key, item);
    }
    entry.watchers.add(listener);
    return () => {
      entry.watchers.delete(listener);
      // A change on its way finishes first (its answer is what the user's other tabs hear).
      if (!entry.watchers.size && !entry.inFlight) this.#forget(key);
    };
  }

  #forget(key: string): void {
    this.#entries.delete(key);
    this.#live.unwatch(key);
  }

  /** The item's current state (the same object until it changes). */
  get(item: ItemRef): LikeState {
    return this.#entries.get(itemKeyOf(item))?.state ?? EMPTY;
  }

  /** Like or unlike: shown at once, confirmed or rolled back by the answer. */
  toggle(item: ItemRef): void {
    const entry = this.#entries.get(itemKeyOf(item));
    if (!entry || !entry.loaded || this.#token === null || Date.now() < entry.blockedUntil) return;
    entry.wanted = !entry.wanted;
    entry.error = null;
    entry.pending = false;
    if (!entry.inFlight) void this.#write(entry);
    this.#publish(entry);
  }

  /** Sends the wanted state until the server's answer matches it: likes and unlikes set a state, so resending never doubles. */
  async #write(entry: Entry): Promise<void> {
    entry.inFlight = true;
    try {
      while (entry.wanted !== entry.liked) {
        const intent = entry.wanted;
        const answer = await this.#send(entry.item, intent);
        if (answer.status === "pending") {
          entry.liked = intent;
          entry.pending = true;
        } else {
          entry.liked = answer.user_liked;
          entry.count = answer.count;
          entry.hidden = answer.count === null;
          entry.pending = false;
          // The server's word wins over an intent it did not take, so the loop ends.
          if (entry.liked !== intent) entry.wanted = entry.liked;
        }
        this.#tellTabs(entry);
      }
    } catch (error) {
      entry.wanted = entry.liked;
      entry.error = reason(error, entry.liked);
      if (error instanceof PlauditError && error.code === "rate_limited") {
        const wait = (error.retryAfter ?? 60) * 1000;
        entry.blockedUntil = Date.now() + wait;
        setTimeout(() => this.#publish(entry), wait + 10);
      }
    } finally {
      entry.inFlight = false;
      this.#publish(entry);
      if (!entry.watchers.size) this.#forget(itemKeyOf(entry.item));
    }
  }

  /** One intent, resent after a lost answer (network error, 502-504) and once with a fresh token after a 401. */
  async #send(item: ItemRef, like: boolean): Promise<LikeResult | PendingResult> {
    let refreshed = false;
    for (let attempt = 0; ; attempt++) {
      await this.#ensureToken(false);
      try {
        return await (like ? this.#client.like(item.item_id, item.item_type) : this.#client.unlike(item.item_id, item.item_type));
      } catch (error) {
        if (!(error instanceof PlauditError)) throw error;
        if (error.status === 401 && !refreshed) {
          refreshed = true;
          await this.#ensureToken(true);
          continue;
        }
        const lost = error.status === 0 || (error.status >= 502 && error.status <= 504);
        const delay = RESEND_DELAYS_MS[attempt];
        if (!lost || delay === undefined) throw error;
        await new Promise((r) => setTimeout(r, error.retryAfter ? error.retryAfter * 1000 : delay));
      }
    }
  }

  async #ensureToken(refresh: boolean): Promise<void> {
    if (refresh || !this.#tokenRead) {
      const source = this.#tokenSource;
      // A host callback that throws leaves the buttons read-only, not broken.
      this.#tokenRead = (async () => {
        this.#token = (source && (await source({ refresh }))) || null;
      })().catch(() => {
        this.#token = null;
      });
    }
    await this.#tokenRead;
  }

  #queueRead(keys: readonly string[]): void {
    for (const key of keys) this.#toRead.add(key);
    if (this.#readQueued || !this.#toRead.size) return;
    this.#readQueued = true;
    nextFrame(() => {
      this.#readQueued = false;
      const items = [...this.#toRead].flatMap((key) => this.#entries.get(key)?.item ?? []);
      this.#toRead.clear();
      for (let i = 0; i < items.length; i += MAX_BATCH) void this.#read(items.slice(i, i + MAX_BATCH));
    });
  }

  /** Reads up to 100 items' likes and, with a token, whether the user likes them: one request each (has_liked per item type). */
  async #read(items: ItemRef[]): Promise<void> {
    await this.#ensureToken(false);
    const byType = new Map<ItemType, ItemRef[]>();
    for (const item of items) byType.set(item.item_type, [...(byType.get(item.item_type) ?? []), item]);
    const [counts, ...liked] = await Promise.allSettled([
      this.#client.counts(items, ["likes"]),
      ...(this.#token ? [...byType].map(([type, group]) => this.#hasLiked(type, group)) : []),
    ]);
    const likedByKey = new Map<string, { liked: boolean; pending: boolean }>();
    for (const result of liked) if (result.status === "fulfilled") for (const [key, value] of result.value) likedByKey.set(key, value);
    const unread: string[] = [];
    for (const item of items) {
      const key = itemKeyOf(item);
      const entry = this.#entries.get(key);
      if (!entry) continue;
      // null: the server could not read the item now (a partial answer), not a hidden count.
      const read = counts.status === "fulfilled" ? counts.value.counts[key] : null;
      if (read) {
        entry.count = read.likes ?? null;
        entry.hidden = read.likes === null;
      }
      const known = likedByKey.get(key);
      if (!entry.inFlight) {
        entry.liked = entry.wanted = known?.liked ?? (this.#token ? entry.liked : false);
        entry.pending = known?.pending ?? false;
      }
      entry.error = read ? null : UNREAD;
      entry.loaded = true;
      if (!read || (this.#token && known === undefined)) unread.push(key);
      else entry.rereads = 0;
      this.#publish(entry);
    }
    this.#reread(unread);
  }

  /** Reads again, with backoff, what a partial or failed answer left unknown (a few times, then the button says so). */
  #reread(keys: string[]): void {
    for (const key of keys) {
      const entry = this.#entries.get(key);
      if (!entry || entry.rereads >= REREAD_DELAYS_MS.length) continue;
      setTimeout(() => this.#queueRead([key]), REREAD_DELAYS_MS[entry.rereads++]);
    }
  }

  /** Whether the user likes each item, and whether that comes from a 202 not yet applied. */
  async #hasLiked(type: ItemType, items: ItemRef[]): Promise<[string, { liked: boolean; pending: boolean }][]> {
    const ids = items.map((item) => String(item.item_id));
    const ask = () => this.#client.hasLiked(ids, type);
    const answer = await ask().catch(async (error: unknown) => {
      if (!(error instanceof PlauditError) || error.status !== 401) throw error;
      await this.#ensureToken(true);
      return await ask();
    });
    const pending = new Set(answer.pending);
    return ids.map((id) => [`${type}:${id}`, { liked: answer.liked[id] === true, pending: pending.has(id) }]);
  }

  #onLive(key: string, likes: number | null): void {
    const entry = this.#entries.get(key);
    // A count the owner hides stays hidden whatever the socket says.
    if (!entry || !entry.loaded || entry.hidden) return;
    if (entry.error === UNREAD) entry.error = null;
    entry.count = likes;
    entry.hidden = likes === null;
    this.#publish(entry);
  }

  /** The signed-in user's other tabs: a confirmed change, named by the token's subject so another user's tab ignores it. */
  #tellTabs(entry: Entry): void {
    this.#tabs?.postMessage({ user: subject(this.#token), key: itemKeyOf(entry.item), liked: entry.liked, count: entry.count, pending: entry.pending });
  }

  #fromTab(message: { user: string | null; key: string; liked: boolean; count: number | null; pending: boolean }): void {
    const entry = this.#entries.get(message.key);
    if (!entry || entry.inFlight || message.user === null || message.user !== subject(this.#token)) return;
    entry.liked = entry.wanted = message.liked;
    entry.count = message.count;
    entry.pending = message.pending;
    this.#publish(entry);
  }

  /** Recomputes what the button shows: the confirmed count plus the unconfirmed change. */
  #publish(entry: Entry): void {
    const delta = entry.wanted === entry.liked ? 0 : entry.wanted ? 1 : -1;
    const count = entry.count === null ? null : Math.max(0, entry.count + delta);
    entry.state = {
      count,
      countFormatted: count === null ? null : formatCount(count),
      liked: entry.wanted,
      pending: entry.pending,
      busy: entry.inFlight,
      error: entry.error,
      blockedUntil: Date.now() < entry.blockedUntil ? entry.blockedUntil : 0,
      loaded: entry.loaded,
      canLike: this.#token !== null,
    };
    for (const listener of entry.watchers) listener();
  }
}

const UNREAD = "The count could not be read.";

const EMPTY: LikeState = { count: null, countFormatted: null, liked: false, pending: false, busy: false, error: null, blockedUntil: 0, loaded: false, canLike: false };

function subject(token: string | null): string | null {
  try {
    const payload = token?.split(".")[1];
    return payload ? (JSON.parse(atob(payload.replace(/-/g, "+").replace(/_/g, "/"))) as { sub?: string }).sub ?? null : null;
  } catch {
    return null;
  }
}

/** One sentence for the user: what failed and what to do. */
function reason(error: unknown, liked: boolean): string {
  const undone = liked ? "Your unlike was not saved" : "Your like was not saved";
  if (!(error instanceof PlauditError)) return `${undone}: ${String(error)}`;
  switch (error.code) {
    case "rate_limited":
      return `${undone}: too many likes, try again in ${error.retryAfter ?? 60} s.`;
    case "not_found":
      return `${undone}: this item is not available.`;
    case "unauthorized":
      return `${undone}: please sign in again.`;
    case "network_error":
    case "timeout":
      return `${undone}: the server did not answer. Try again.`;
    default:
      return `${undone}: ${error.message}`;
  }
}
