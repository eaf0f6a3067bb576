import { connect } from "node:net";
import { describe, expect, it, vi } from "vitest";
import setup from "./dynalite-setup";

describe("the central store of the tests and of npm start (scripts/central-store.mjs)", () => {
  it("drops a request whose client went away mid-body, and goes on answering", async () => {
    let endpoint = "";
    const stop = await setup({ provide: (_: string, value: string) => (endpoint = value) } as never);
    try {
      const socket = connect(Number(new URL(endpoint).port), "127.0.0.1");
      await new Promise<void>((resolve) => socket.on("connect", resolve));
      socket.write("POST / HTTP/1.1\r\nHost: store\r\nContent-Length: 1000\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\n\r\n{");
      await vi.waitFor(() => expect(socket.bytesWritten).toBeGreaterThan(0));
      socket.destroy();
      await new Promise<void>((resolve) => socket.on("close", () => resolve()));
      const answer = await fetch(endpoint, {
        method: "POST",
        headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": "DynamoDB_20120810.ListTables", "x-amz-date": "20260101T000000Z", authorization: "AWS4-HMAC-SHA256 Credential=t/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=x" },
        body: "{}",
      });
      expect(answer.status).toBe(200);
      expect(await answer.json()).toEqual({ TableNames: [] });
    } finally {
      await stop();
    }
  });
});
