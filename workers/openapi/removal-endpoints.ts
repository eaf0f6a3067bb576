/**
 * The endpoints through which the host app removes a user's likes: account
 * deletion and the purge of fake accounts (docs/privacy.md, "Removing a
 * user"), as entries of the OpenAPI registry.
 */
import { PurgeBody, PurgeResponse, RemovalResponse } from "../../shared/removal";
import { AdminUserParams } from "../../shared/schemas";
import type { Endpoint } from "./endpoint";

const params = (user_id: string) => ({ schema: AdminUserParams, example: { user_id } });

const running = {
  user_id: "4200",
  kind: "delete",
  phase: "unliking",
  requested_at: "2026-12-02T09:00:00.000Z",
  finished_at: null,
  barred: true,
  removed: { likes: 300, saves: 2 },
  items_forgotten: 0,
  remaining: { on: 1200, undelivered: 100, edges: 1502 },
};
const done = { ...running, phase: "done", finished_at: "2026-12-02T09:00:41.000Z", removed: { likes: 1500, saves: 2 }, items_forgotten: 1502, remaining: { on: 0, undelivered: 0, edges: 0 } };
const purged = { ...done, user_id: "4100", kind: "purge", items_forgotten: 0 };
const none = { ...running, kind: null, phase: null, requested_at: null, barred: false, removed: { likes: 0, saves: 0 }, remaining: { on: 0, undelivered: 0, edges: 0 } };

export const REMOVAL_ENDPOINTS: readonly Endpoint[] = [
  {
    method: "delete",
    path: "/v1/admin/users/{user_id}",
    operationId: "deleteUser",
    tag: "privacy",
    summary: "Delete an account's likes and saves, and every trace of them",
    description:
      "Starts the deletion and answers at once with where it stands (`Location`: its status). The user's object undoes every like and save through the unlike path, 100 at a time, so every count they touched goes down exactly once; then each item's object drops its row for the user, and the central store's rows, D1's index row and the user's blocks are deleted. The account is barred from the start. Idempotent: asking again answers the same deletion; it resumes by itself after a crash.",
    auth: "service",
    params: params("4200"),
    response: { description: "The deletion, as it stands.", schema: RemovalResponse, examples: { started: running } },
    errors: [503],
  },
  {
    method: "get",
    path: "/v1/admin/users/{user_id}/removal",
    operationId: "userRemoval",
    tag: "privacy",
    summary: "Where a user's deletion or purge stands",
    auth: "service",
    params: params("4200"),
    response: { description: "The removal, or none (`kind` null).", schema: RemovalResponse, examples: { running, done, none } },
    errors: [503],
  },
  {
    method: "post",
    path: "/v1/admin/purge",
    operationId: "purge",
    tag: "privacy",
    summary: "Purge fake accounts: undo their likes and bar them",
    description:
      "Each account's likes and saves are undone as a deletion's are, in the background, and the account may not like or save (403 `barred`) until its bar is lifted. Its edges are kept (state off), so the host app can lift the bar. Idempotent; 503 if some account could not be reached (asking again is safe).",
    auth: "service",
    body: { schema: PurgeBody, examples: { two: { user_ids: ["4100", "4101"] } } },
    response: { description: "Each account's removal, as it stands.", schema: PurgeResponse, examples: { done: { purged: [purged] } } },
    errors: [503],
  },
  {
    method: "delete",
    path: "/v1/admin/users/{user_id}/bar",
    operationId: "liftBar",
    tag: "privacy",
    summary: "Lift a purged account's bar",
    description: "The account may like and save again; the likes the purge undid stay undone. A deleted account stays barred (409).",
    auth: "service",
    params: params("4100"),
    response: { description: "The purge, its bar lifted.", schema: RemovalResponse, examples: { lifted: { ...purged, barred: false } } },
    errors: [409, 503],
  },
];
