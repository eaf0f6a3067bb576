import { call, freshId, json, tokenFor } from "./helpers";

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
