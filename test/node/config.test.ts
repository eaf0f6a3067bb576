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

  it("bounds the privacy caches and grants: a cache may be off, a grant must live at least a second", () => {
    expect(config({}).PRIVACY_CACHE_TTL_MS).toBe(5000);
    expect(config({}).GRANT_MAX_SECONDS).toBe(3600);
    expect(config({ PRIVACY_CACHE_TTL_MS: "0" }).PRIVACY_CACHE_TTL_MS).toBe(0);
    expect(() => config({ GRANT_MAX_SECONDS: "0" })).toThrow(/GRANT_MAX_SECONDS/);
  });

  it("parses an environment once and hands back the same settings", () => {
    const env = { HOT_SHARDS: "8" };
    expect(config(env)).toBe(config(env));
  });

  it("has a default for every setting, so no deployment must set any", () => {
    expect(ConfigSchema.safeParse({}).success).toBe(true);
  });

  it("reads standing tiers as shares of the standard limits, and refuses a share outside (0, 1]", () => {
    expect(config({ STANDING_TIERS: "low=0.2, new = 0.5" }).STANDING_TIERS).toEqual({ low: 0.2, new: 0.5 });
    expect(config({}).STANDING_TIERS).toEqual({ low: 0.2 });
    expect(() => config({ STANDING_TIERS: "low=2" })).toThrow(/STANDING_TIERS/);
    expect(() => config({ STANDING_TIERS: "low" })).toThrow(/STANDING_TIERS/);
  });

  it("accepts only asymmetric algorithms from a key set, so a public key never serves as an HMAC secret", () => {
    expect(config({ AUTH_ALGORITHMS: "RS256, ES256" }).AUTH_ALGORITHMS).toEqual(["RS256", "ES256"]);
    expect(() => config({ AUTH_ALGORITHMS: "RS256,HS256" })).toThrow(/AUTH_ALGORITHMS/);
    expect(() => config({ AUTH_ALGORITHMS: "" })).toThrow(/AUTH_ALGORITHMS/);
  });

  it("keeps a reshard phase longer than twice the count layout's lifetime", () => {
    expect(() => config({ LAYOUT_TTL_MS: "5000", RESHARD_GRACE_MS: "10000" })).toThrow(/RESHARD_GRACE_MS: must exceed twice LAYOUT_TTL_MS \(10000 ms\)/);
    expect(() => config({ RESHARD_GRACE_MS: "8000" })).toThrow(/RESHARD_GRACE_MS/);
    expect(config({ LAYOUT_TTL_MS: "100", RESHARD_GRACE_MS: "1000" }).RESHARD_GRACE_MS).toBe(1000);
  });

  it("needs the issuer and the audience whenever a key set is configured", () => {
    expect(() => config({ AUTH_JWKS_URL: "https://example.auth0.com/.well-known/jwks.json" })).toThrow(/AUTH_ISSUER.*AUTH_AUDIENCE/);
    expect(() => config({ AUTH_SERVICE_JWKS: '{"keys":[]}', AUTH_ISSUER: "https://issuer/" })).toThrow(/AUTH_AUDIENCE/);
    const settings = config({ AUTH_JWKS_URL: "https://example.auth0.com/.well-known/jwks.json", AUTH_ISSUER: "https://example.auth0.com/", AUTH_AUDIENCE: "plaudit" });
    expect(settings.AUTH_USER_CLAIM).toBe("sub");
  });

  it("lists the addresses the per-IP limits never count", () => {
    expect(config({}).IP_LIMIT_EXEMPT).toEqual(["127.0.0.1", "::1"]);
    expect(config({ IP_LIMIT_EXEMPT: "" }).IP_LIMIT_EXEMPT).toEqual([]);
  });
});
