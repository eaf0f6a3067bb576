// A server the tests start (bench/lib/server.ts) that never answers fails
// its start with the end of its own output, which would otherwise go with
// its state folder; one that finds its port taken starts on another.
import { describe, expect, it } from "vitest";
import { freshStateDir, onFreePort, PORT_ATTEMPTS, removeStateDir, startServer } from "../../bench/lib/server";

describe("a local server that exits before it answers", () => {
  it("fails its start with its own last words", async () => {
    const stateDir = freshStateDir("plaudit-start-fails-");
    try {
      await expect(startServer({ stateDir, env: { PLAUDIT_LOG_LEVEL: "loud" } })).rejects.toThrow(
        /exited before it was ready[\s\S]*Its output, last 100 lines:[\s\S]*PLAUDIT_LOG_LEVEL is one of debug, info, log, warn, error, none, not "loud"/,
      );
    } finally {
      removeStateDir(stateDir);
    }
  });
});

describe("a start whose port is taken before the server binds it", () => {
  // wrangler dev's own words when its port is taken, as a start fails with them (its output's tail).
  const taken = (port: number) => new Error(`plaudit exited before it was ready (code 1)\nIts output, last 100 lines:\n✘ [ERROR] Address already in use (127.0.0.1:${port}).`);
  const ports = (...list: number[]) => {
    const queue = [...list];
    return async () => queue.shift()!;
  };

  it("starts again on another port", async () => {
    const tried: number[] = [];
    const started = await onFreePort(async (port) => {
      tried.push(port);
      if (port === 40001) throw taken(port);
      return `up on ${port}`;
    }, ports(40001, 40002));
    expect([started, tried]).toEqual(["up on 40002", [40001, 40002]]);
  });

  it("gives up after PORT_ATTEMPTS ports, and at once on any other failure or another port's", async () => {
    const tried: number[] = [];
    const alwaysTaken = async (port: number) => {
      tried.push(port);
      throw taken(port);
    };
    await expect(onFreePort(alwaysTaken, ports(1, 2, 3, 4, 5))).rejects.toThrow("127.0.0.1:3");
    expect(tried).toHaveLength(PORT_ATTEMPTS);
    await expect(onFreePort(() => Promise.reject(new Error("plaudit did not answer /healthz within 180000 ms")), ports(7, 8))).rejects.toThrow("/healthz");
    // An earlier attempt's words in the same log do not make a different failure a taken port.
    await expect(onFreePort(() => Promise.reject(taken(9)), ports(10, 11))).rejects.toThrow("127.0.0.1:9");
  });
});
