// The no-work reference: checks the token and answers in plaudit's shape,
// nothing else. Its rate is the ceiling of `wrangler dev` on this machine.
import { answer, bearerUser } from "./auth";

type NoopEnv = { AUTH_SECRET: string };
type FeedBody = { items?: { item_type: string; item_id: string }[] };

export default {
  async fetch(request: Request, env: NoopEnv): Promise<Response> {
    const user = await bearerUser(request, env.AUTH_SECRET);
    if (user === null) return answer({ error: "unauthorized" }, 401);
    const path = new URL(request.url).pathname;
    if (path === "/healthz") return answer({ ok: true });
    if (path === "/v1/counts") {
      const { items = [] } = (await request.json()) as FeedBody;
      return answer({ counts: Object.fromEntries(items.map((i) => [`${i.item_type}:${i.item_id}`, { likes: 0 }])) });
    }
    if (path === "/v1/like") {
      const on = request.method === "POST";
      return answer({ status: on ? "liked" : "unliked", count: 0, count_formatted: "0", user_liked: on });
    }
    return answer({ error: "not_found" }, 404);
  },
};
