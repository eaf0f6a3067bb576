import { describe, expect, it } from "vitest";
import { call, freshId, json, like, newUser, tokenFor } from "./helpers";
import { sample, scrape } from "./metrics-exposition";

// Limits by reputation: the token's standing claim or Cloudflare's bot score
// selects a stricter tier (defaults: standard 30 likes a minute, tier low = 0.2
// of that, so 6; a bot score under 30 means low).
const LOW_PER_MINUTE = 6;
const STANDARD_PER_MINUTE = 30;

/** Likes of fresh items until the first 429, at most `bound`; returns how many were accepted. */
async function acceptedBeforeRefusal(send: () => Promise<Response>, bound: number): Promise<number> {
  for (let i = 0; i < bound; i++) {
    const res = await send();
    if (res.status === 429) return i;
    expect(res.status).toBe(200);
  }
  return bound;
}

describe("limits by standing", () => {
  it("a low-standing account reaches its stricter limit first", async () => {
    const service = await tokenFor(freshId(), { role: "service" });
    const before = await scrape(service);
    const low = await tokenFor(freshId(), { claims: { standing: "low" } });
    const standard = await newUser();
    const lowAccepted = await acceptedBeforeRefusal(() => like(low, freshId()), 2 * LOW_PER_MINUTE);
    // A slow machine may earn the bucket a token meanwhile: at least the burst, never the standard limit.
    expect(lowAccepted).toBeGreaterThanOrEqual(LOW_PER_MINUTE);
    expect(lowAccepted).toBeLessThan(2 * LOW_PER_MINUTE);
    expect(await acceptedBeforeRefusal(() => like(standard.token, freshId()), lowAccepted + 1)).toBe(lowAccepted + 1);
    const after = await scrape(service);
    const delta = (kind: string) =>
      sample(after, "plaudit_limit_refusals_total", { kind }) - sample(before, "plaudit_limit_refusals_total", { kind });
    expect({ reputation: delta("reputation"), user: delta("user") }).toEqual({ reputation: 1, user: 0 });
  });

  it("a standing the configuration does not name keeps the standard limits", async () => {
    for (const standing of ["trusted", "constructor", "__proto__"]) {
      const token = await tokenFor(freshId(), { claims: { standing } });
      const accepted = await acceptedBeforeRefusal(() => like(token, freshId()), 2 * LOW_PER_MINUTE);
      expect({ standing, accepted }).toEqual({ standing, accepted: 2 * LOW_PER_MINUTE });
    }
  });

  it("a low bot score from Cloudflare selects the stricter tier, a high one does not", async () => {
    const send = (token: string, score: number) =>
      call("POST", "/v1/like", {
        token,
        body: { item_id: freshId(), item_type: "post" },
        cf: { botManagement: { score } } as unknown as IncomingRequestCfProperties,
      });
    const bot = (await newUser()).token;
    const human = (await newUser()).token;
    const botAccepted = await acceptedBeforeRefusal(() => send(bot, 5), 2 * LOW_PER_MINUTE);
    expect(botAccepted).toBeGreaterThanOrEqual(LOW_PER_MINUTE);
    expect(botAccepted).toBeLessThan(2 * LOW_PER_MINUTE);
    expect(await acceptedBeforeRefusal(() => send(human, 90), 2 * LOW_PER_MINUTE)).toBe(2 * LOW_PER_MINUTE);
  });
});

describe("the admin view of a user", () => {
  it("shows the limits that can be in force and what selects them", async () => {
    const service = await tokenFor(freshId(), { role: "service" });
    const res = await call("GET", `/v1/admin/users/${freshId()}`, { token: service });
    expect(res.status).toBe(200);
    const { limits } = await json(res);
    expect(limits.standard.likes).toEqual({ per_minute: STANDARD_PER_MINUTE, per_day: 1000 });
    expect(limits.tiers.low).toEqual({
      share: 0.2,
      likes: { per_minute: LOW_PER_MINUTE, per_day: 200 },
      saves: { per_minute: LOW_PER_MINUTE, per_day: 200 },
    });
    expect(limits.selected_by).toMatchObject({ standing_claim: "standing", bot_score_below: 30, bot_score_tier: "low" });
  });
});
