import { describe, expect, it } from "vitest";
import committed from "../../docs/openapi.json";
import { PlauditClient } from "../../clients/typescript/src/index";
import { fetchWorker, freshId, newUser, tokenFor } from "./helpers";

/** Pages for people, not API calls: a typed client has nothing to return from them. */
const PAGES = new Set(["GET /docs", "GET /dashboard", "GET /live"]);

type Method = Exclude<
  { [K in keyof PlauditClient]: PlauditClient[K] extends (...args: never[]) => unknown ? K : never }[keyof PlauditClient],
  "request"
>;

/**
 * One call of every method of the client. The type makes a new method fail
 * to compile until it is called here; the test below then fails for every
 * documented route none of these calls reaches.
 */
function everyMethod(
  user: PlauditClient,
  service: PlauditClient,
  send: (request: Request) => Promise<Response>,
  ids: { userId: string; otherId: string; item: string },
): Record<Method, () => Promise<unknown>> {
  const { userId, otherId, item } = ids;
  return {
    like: () => user.like(item, "post"),
    unlike: () => user.unlike(item, "post"),
    save: () => user.save(item, "post"),
    unsave: () => user.unsave(item, "post"),
    view: () => user.view(item, "post"),
    share: () => user.share(item, "post"),
    count: () => user.count(item, "post"),
    counts: () => user.counts([{ item_id: item, item_type: "post" }]),
    countsByQuery: () => user.countsByQuery([{ item_id: item, item_type: "post" }]),
    history: () => user.history(item, "post", 2),
    hasLiked: () => user.hasLiked([item], "post"),
    likers: () => user.likers(item, "post"),
    myLikes: () => user.myLikes(),
    // The URL a WebSocket opens: asked for here as the upgrade request a browser sends.
    liveUrl: async () => {
      const response = await send(new Request(user.liveUrl().replace(/^ws/, "http"), { headers: { upgrade: "websocket" } }));
      response.webSocket?.accept();
      response.webSocket?.close(1000, "done");
      return response;
    },
    setItemSettings: () => service.setItemSettings(item, "post", { owner_id: otherId }),
    itemSettings: () => service.itemSettings(item, "post"),
    block: () => service.block(otherId, userId),
    blocking: () => service.blocking(otherId, userId),
    unblock: () => service.unblock(otherId, userId),
    importEdges: () => service.importEdges([{ user_id: otherId, item_id: item, item_type: "post", liked_at: Date.now(), kind: "like" }]),
    rebuildStep: () => service.rebuildStep("index", null, 1),
    // The layout the project already has: answers "done" and moves nothing.
    reshardStep: () => service.reshardStep(1),
    adminUser: () => service.adminUser(userId),
    adminItem: () => service.adminItem(item, "post"),
    expectHot: () => service.expectHot(freshId(), "post"),
    dashboardData: () => service.dashboardData(),
    metrics: () => service.metrics(),
    health: () => user.health(),
    openApi: () => user.openApi(),
    purge: () => service.purge([freshId()]),
    userRemoval: () => service.userRemoval(otherId),
    liftBar: () => service.liftBar(otherId),
    deleteUser: () => service.deleteUser(freshId()),
  };
}

/** `GET /v1/admin/items/post/7` as the document's `GET /v1/admin/items/{item_type}/{item_id}`. */
function documentedRoute(method: string, path: string, templates: readonly string[]): string | undefined {
  const template = templates.find((t) => new RegExp(`^${t.replace(/\{[^}]+\}/g, "[^/]+")}$`).test(path));
  return template && `${method} ${template}`;
}

describe("the typed client", () => {
  it("has a method for every route in the API document, and each reaches its route", async () => {
    const sent: string[] = [];
    const statuses: Record<string, number> = {};
    const templates = Object.keys(committed.paths);
    const fetch = async (request: Request) => {
      const response = await fetchWorker(request);
      const route = documentedRoute(request.method, new URL(request.url).pathname, templates);
      if (route) sent.push(route);
      return response;
    };
    const { id: userId, token } = await newUser();
    const otherId = freshId();
    const user = new PlauditClient({ baseUrl: "http://plaudit.test", token, fetch, maxRetries: 0 });
    const service = new PlauditClient({ baseUrl: "http://plaudit.test", token: await tokenFor("0", { role: "service" }), fetch, maxRetries: 0 });
    const calls = everyMethod(user, service, fetch, { userId, otherId, item: freshId() });
    for (const [name, run] of Object.entries(calls)) {
      const result = await run().then(
        (value) => (value instanceof Response ? value.status : 200),
        (error: { status?: number }) => error.status ?? 0,
      );
      statuses[name] = result;
    }
    // A route is covered only by a call the Worker answered as that route (not a 404 for a wrong path).
    expect(Object.entries(statuses).filter(([, status]) => status === 404 || status === 405 || status === 0)).toEqual([]);
    const documented = Object.entries(committed.paths).flatMap(([path, operations]) =>
      Object.keys(operations)
        .filter((m) => m !== "parameters")
        .map((m) => `${m.toUpperCase()} ${path}`),
    );
    const missing = documented.filter((route) => !PAGES.has(route) && !sent.includes(route));
    expect(missing, "add a method to clients/typescript/src/client.ts for each").toEqual([]);
  });
});
