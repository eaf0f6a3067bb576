import { afterEach, describe, expect, it, vi } from "vitest";
import { log } from "../../shared/log";

afterEach(() => vi.restoreAllMocks());

describe("log lines", () => {
  it("are one JSON object each, with the level and the event name first", () => {
    const out = vi.spyOn(console, "log").mockImplementation(() => {});
    log("info", "item_split", { shards: 4, request_id: "r-123456789" });
    expect(out).toHaveBeenCalledTimes(1);
    const line = out.mock.calls[0]![0] as string;
    expect(Object.keys(JSON.parse(line)).slice(0, 2)).toEqual(["level", "event"]);
    expect(JSON.parse(line)).toEqual({ level: "info", event: "item_split", shards: 4, request_id: "r-123456789" });
  });

  it("go to the console stream of their level, so a log drain can filter on it", () => {
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    log("error", "delivery_failed");
    log("warn", "slow_request");
    expect(JSON.parse(error.mock.calls[0]![0] as string).level).toBe("error");
    expect(JSON.parse(warn.mock.calls[0]![0] as string).event).toBe("slow_request");
  });
});
