// Starts a 127.0.0.1 server that accepts connections and never answers: a
// store that hangs. Its endpoint goes to the workerd projects, whose tests
// point the central store at it to see the deadlines and the breaker work.
import { createServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  interface ProvidedContext {
    hangingEndpoint: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    // Reads the request and says nothing back.
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  project.provide("hangingEndpoint", `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}
