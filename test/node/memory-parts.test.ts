import { describe, expect, it } from "vitest";
import { partOf } from "../../bench/lib/memory";

describe("the parts of a local server, by command line", () => {
  it("tells the Worker's workerd (the one with the inspector) from wrangler's proxy, wrangler and the central store", () => {
    const workerd = "/p/node_modules/@cloudflare/workerd-linux-64/bin/workerd serve --binary --experimental --socket-addr=entry=127.0.0.1:0";
    expect(partOf(`${workerd} --external-addr=loopback=127.0.0.1:34913 --control-fd=3 - --inspector-addr=localhost:0 --`)).toBe("worker runtime");
    expect(partOf(`${workerd} --external-addr=loopback=127.0.0.1:46703 --control-fd=3 -`)).toBe("wrangler proxy");
    expect(partOf("/usr/bin/node --no-warnings --experimental-vm-modules /p/node_modules/wrangler/wrangler-dist/cli.js dev --port 8791")).toBe("wrangler");
    expect(partOf("/usr/bin/node /p/scripts/central-store.mjs /tmp/state/central-store")).toBe("central store");
    expect(partOf("node scripts/start.mjs")).toBe("other");
  });
});
