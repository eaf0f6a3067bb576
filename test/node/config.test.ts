import { describe, expect, it } from "vitest";
import { config, ConfigSchema } from "../../shared/config";

describe("the typed configuration", () => {
  it("gives every setting its default when nothing is set", () => {
    const settings = config({});
    expect(settings.RATE_LIMIT_PER_MINUTE).toBe(30);
    expect(settings.HOT_SHARDS).toBe(16);
    expect(settings.CORS_ORIGINS).toBe("*");
    expect(settings.METRICS_PUBLIC).toBe(false);
    expect(settings.ALTERNATOR_ENDPOINT).toBe("");
  });

  it("reads the strings the runtime hands over as numbers and flags, blank meaning the default", () => {
    const settings = config({ HOT_SHARDS: "4", COOL_WINDOW_SECONDS: " ", METRICS_PUBLIC: "TRUE", ALTERNATOR_ENDPOINT: " http://127.0.0.1:1 " });
    expect(settings.HOT_SHARDS).toBe(4);
    expect(settings.COOL_WINDOW_SECONDS).toBe(3600);
    expect(settings.METRICS_PUBLIC).toBe(true);
    expect(settings.ALTERNATOR_ENDPOINT).toBe("http://127.0.0.1:1");
  });

  it("refuses a bad value, naming the variable", () => {
    expect(() => config({ HOT_SHARDS: "0" })).toThrow(/HOT_SHARDS/);
    expect(() => config({ RATE_LIMIT_PER_DAY: "lots" })).toThrow(/RATE_LIMIT_PER_DAY/);
    expect(() => config({ METRICS_PUBLIC: "yes" })).toThrow(/METRICS_PUBLIC/);
  });

  it("parses an environment once and hands back the same settings", () => {
    const env = { HOT_SHARDS: "8" };
    expect(config(env)).toBe(config(env));
  });

  it("has a default for every setting, so no deployment must set any", () => {
    expect(ConfigSchema.safeParse({}).success).toBe(true);
  });
});
