import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { cronMatcher, readCrons } from "../../scripts/schedule.mjs";

const root = resolve(import.meta.dirname, "../..");
const at = (iso: string) => new Date(iso);

describe("the local cron schedule of npm start", () => {
  it("reads the crons of wrangler.toml's [triggers]", () => {
    expect(readCrons(readFileSync(join(root, "wrangler.toml"), "utf8"))).toEqual(["*/5 * * * *"]);
    expect(readCrons('[vars]\nX = "1"\n\n[triggers]\ncrons = ["0 * * * *", "30 2 * * MON"]\n')).toEqual(["0 * * * *", "30 2 * * MON"]);
    expect(readCrons("[vars]\n")).toEqual([]);
  });

  it("matches a cron expression at its minutes, in UTC, as Cloudflare does", () => {
    const everyFive = cronMatcher("*/5 * * * *");
    expect(everyFive(at("2026-12-03T10:05:00Z"))).toBe(true);
    expect(everyFive(at("2026-12-03T10:07:00Z"))).toBe(false);
    const mondays = cronMatcher("30 2 * * MON");
    expect(mondays(at("2026-11-30T02:30:00Z"))).toBe(true);
    expect(mondays(at("2026-12-01T02:30:00Z"))).toBe(false);
    const ranges = cronMatcher("0 9-17/4 1,15 * *");
    expect([9, 13, 17].map((h) => ranges(at(`2026-12-15T${String(h).padStart(2, "0")}:00:00Z`)))).toEqual([true, true, true]);
    expect(ranges(at("2026-12-15T10:00:00Z"))).toBe(false);
    expect(ranges(at("2026-12-14T09:00:00Z"))).toBe(false);
    // Both day fields restricted: either one matching is enough.
    const either = cronMatcher("0 0 1 * SUN");
    expect(either(at("2026-12-01T00:00:00Z"))).toBe(true);
    expect(either(at("2026-12-06T00:00:00Z"))).toBe(true);
    expect(either(at("2026-12-07T00:00:00Z"))).toBe(false);
  });

  it("refuses an expression it cannot read, rather than never firing it", () => {
    expect(() => cronMatcher("*/5 * * *")).toThrow(/five fields/);
    expect(() => cronMatcher("61 * * * *")).toThrow(/bad cron value/);
    expect(() => cronMatcher("*/0 * * * *")).toThrow(/bad cron step/);
  });
});
