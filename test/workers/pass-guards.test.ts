import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { EMISSION_VERSION } from "../../shared/emissions";
import { createPass, readPass } from "../../workers/stores/passes";
import { passPlan, resumeStalled, startPass } from "../../workers/pipeline/pass-tick";
import { splitItem } from "../../workers/stores/item-key";
import { failNext } from "./fault-points";
import { freshId, like, newUser, tokenFor } from "./helpers";
import { itemStub, settled } from "./pipeline-helpers";
import { sample, scrape, type Family } from "./metrics-exposition";

/** Each test takes its own kind of pass: one unfinished pass a kind runs at a time. */
describe("a pass's guards", () => {
  it("drops a duplicate of a committed step instead of sending its successor again (which would start a second chain)", async () => {
    const service = await tokenFor(freshId(), { role: "service" });
    const sent = (families: Family[]) => sample(families, "plaudit_queue_messages_total", { queue: "plaudit-events", event: "sent" });
    const dropped = (families: Family[]) => sample(families, "plaudit_pass_steps_dropped_total", { pass: "rebuild_d1" });
    const before = await scrape(service);
    const pass = await createPass(env, passPlan(env, "rebuild_d1"), Date.now());
    if (!pass) throw new Error("a rebuild of D1 is running already");
    // Range 0 committed its step 0 (and its runner sent step 1); step 0 is delivered again.
    await env.DB.prepare("UPDATE pass_ranges SET step = 1 WHERE pass = ? AND range_no = 0").bind(pass.id).run();
    await env.EVENTS.send({ v: EMISSION_VERSION, kind: "pass_step", pass: pass.id, range: 0, step: 0 }, { contentType: "json" });
    await expect.poll(async () => dropped(await scrape(service)) - dropped(before), { timeout: 20_000, interval: 200 }).toBe(1);
    // What the consumer sent is flushed with the drop it counted.
    expect(sent(await scrape(service)) - sent(before)).toBe(0);
    expect((await env.DB.prepare("SELECT step FROM pass_ranges WHERE pass = ? AND range_no = 0").bind(pass.id).first<{ step: number }>())?.step).toBe(1);
  });

  it("finishes, at the cron's next run, a pass whose ranges are all done but whose last runner stopped before it marked it finished", async () => {
    const pass = await createPass(env, passPlan(env, "rebuild_central"), Date.now());
    if (!pass) throw new Error("a rebuild of the central store is running already");
    await env.DB.prepare("UPDATE pass_ranges SET done = 1 WHERE pass = ?").bind(pass.id).run();
    expect((await readPass(env, pass.id))?.finished_at).toBeNull();
    expect(await resumeStalled(env, pass, Date.now())).toBe(0);
    expect((await readPass(env, pass.id))?.finished_at).not.toBeNull();
  });

  it("starts no second pass of a kind while one runs (two overlapping cron runs), and the next once it finished", async () => {
    const now = Date.now();
    const first = await createPass(env, passPlan(env, "reconcile"), now);
    expect(first).not.toBeNull();
    expect(await createPass(env, passPlan(env, "reconcile"), now + 1)).toBeNull();
    expect((await env.DB.prepare("SELECT COUNT(*) AS n FROM passes WHERE kind = 'reconcile'").first<{ n: number }>())?.n).toBe(1);
    await env.DB.prepare("UPDATE passes SET finished_at = ? WHERE id = ?").bind(now + 2, first!.id).run();
    expect(await createPass(env, passPlan(env, "reconcile"), now + 3)).not.toBeNull();
  });

  it("skips an item whose check keeps failing after a step's third delivery, so its range and the pass still finish", async () => {
    const service = await tokenFor(freshId(), { role: "service" });
    const item = `post:${freshId()}`;
    expect((await like((await newUser()).token, splitItem(item)[1])).status).toBe(200);
    await settled(item);
    await runInDurableObject(itemStub(item), (instance) => failNext(instance, "emissionState", 1_000));
    await env.DB.prepare("UPDATE passes SET finished_at = ? WHERE kind = 'reconcile' AND finished_at IS NULL").bind(Date.now()).run();
    const skipped = (families: Family[]) => sample(families, "plaudit_pass_items_skipped_total", { pass: "reconcile" });
    const before = await scrape(service);
    const pass = await startPass(env, passPlan(env, "reconcile"));
    if (!pass) throw new Error("a reconciliation pass is running already");
    await expect.poll(async () => (await readPass(env, pass.id))?.finished_at, { timeout: 90_000, interval: 500 }).not.toBeNull();
    await expect.poll(async () => skipped(await scrape(service)) - skipped(before), { timeout: 10_000, interval: 200 }).toBe(1);
    await runInDurableObject(itemStub(item), (instance) => failNext(instance, "emissionState", 0));
  }, 120_000);
});
