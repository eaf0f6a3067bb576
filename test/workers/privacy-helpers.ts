import { expect, vi } from "vitest";
import type { EmittedEdge } from "../../shared/emissions";
import type { LiveServerMessage } from "../../shared/live";
import { call, fetchWorker, freshId, json, tokenFor } from "./helpers";
import { deliver, headEmission } from "./pipeline-helpers";

export const service = () => tokenFor(freshId(), { role: "service" });

/** The host app's PUT of an item's settings. */
export async function setSettings(item_id: string, body: Record<string, unknown>, item_type = "post"): Promise<Response> {
  return call("PUT", `/v1/admin/items/${item_type}/${item_id}/settings`, { token: await service(), body });
}

/** A grant the host app signs: `viewer` may see the followers-only items of `owners`. */
export function grantFor(viewer: string, owners: string[], expiresIn = 600): Promise<string> {
  return tokenFor(viewer, { expiresIn, claims: { followers_of: owners } });
}

export async function block(blocker: string, blocked: string) {
  return json(await call("PUT", `/v1/admin/users/${blocker}/blocks/${blocked}`, { token: await service() }));
}

export async function unblock(blocker: string, blocked: string) {
  return json(await call("DELETE", `/v1/admin/users/${blocker}/blocks/${blocked}`, { token: await service() }));
}

export async function hasLiked(token: string, item_id: string, grant?: string): Promise<boolean> {
  const res = await call("POST", "/v1/has_liked", {
    token,
    body: { item_ids: [item_id], item_type: "post" },
    ...(grant ? { headers: { "x-plaudit-grant": grant } } : {}),
  });
  return (await json(res)).liked[item_id];
}

/** Who reads: a user's token and grant, or neither (anonymous). */
export type Reader = { id?: string; token?: string; grant?: string };

/**
 * Gives an item two likers, views, shares, a save, unique viewers and today's
 * history, through the aggregator as the item's object would send them: the
 * stores hold the truth, and this isolate's read caches hold nothing of it.
 */
export async function seed(item: string, likers: readonly string[]): Promise<void> {
  const at = Date.now() - 60_000;
  const emission = headEmission(`post:${item}`, {
    seq: 1,
    counts: { likes: likers.length, views: 7, shares: 2, saves: 1 },
    edges: likers.map((user, i): EmittedEdge => [user, "likes", 1, 1, i + 1, at + i]),
  });
  emission.snapshot!.unique_viewers = 3;
  expect((await deliver([emission])).retried).toEqual([]);
}

/** An emission setting every count of `key` to `n` (and its version to `n`). */
export const countsEmission = (key: string, n: number) =>
  headEmission(key, { seq: n, counts: { likes: n, views: n, shares: n, saves: n } });

export type LiveSocket = {
  ws: WebSocket;
  messages: LiveServerMessage[];
  /** Every count pushed since the last call, merged by item, once a message naming `key` has come. */
  countsUntil(key: string): Promise<Record<string, unknown>>;
};

/** A live socket opened as `reader`, subscribed to `items` (its `subscribed` answer read). */
export async function liveSocket(reader: Reader, items: readonly string[]): Promise<LiveSocket> {
  const headers: Record<string, string> = { upgrade: "websocket" };
  if (reader.token) headers.authorization = `Bearer ${reader.token}`;
  if (reader.grant) headers["x-plaudit-grant"] = reader.grant;
  const res = await fetchWorker(new Request("http://plaudit.test/v1/live", { headers }));
  expect(res.status).toBe(101);
  const ws = res.webSocket!;
  ws.accept();
  const messages: LiveServerMessage[] = [];
  ws.addEventListener("message", (event) => void messages.push(JSON.parse(event.data as string)));
  ws.send(JSON.stringify({ type: "subscribe", items: items.map((key) => ({ item_type: key.split(":")[0], item_id: key.split(":")[1] })) }));
  await vi.waitFor(() => expect(messages.some((m) => m.type === "subscribed")).toBe(true), { timeout: 10_000, interval: 20 });
  let seen = messages.length;
  return {
    ws,
    messages,
    async countsUntil(key) {
      const merged: Record<string, unknown> = {};
      await vi.waitFor(
        () => {
          for (; seen < messages.length; seen++) {
            const message = messages[seen]!;
            if (message.type === "counts") Object.assign(merged, message.counts);
          }
          expect(merged, `counts naming ${key}`).toHaveProperty([key]);
        },
        { timeout: 10_000, interval: 20 },
      );
      return merged;
    },
  };
}
