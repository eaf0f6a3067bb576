// A minimal client of the V8 inspector that `wrangler dev` serves
// (`--inspector-port`): the Worker's isolate, every Durable Object of its
// classes included, answers it. Events (console calls, Network events) are
// read and dropped; only the answers to this client's own commands are kept.
import WebSocket from "ws";

export type Inspector = {
  send<T>(method: string, params?: Record<string, unknown>): Promise<T>;
  close(): void;
};

/** Connects, retrying until `timeoutMs`: the proxy answers only once the Worker's runtime is up. */
export async function connectInspector(port: number, timeoutMs = 60_000): Promise<Inspector> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await open(port);
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`no inspector on port ${port}: ${String(error)}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

async function open(port: number): Promise<Inspector> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/`, { headers: { origin: "http://localhost" } });
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  let next = 1;
  const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  socket.on("message", (data) => {
    const message = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: { message: string } };
    const caller = message.id === undefined ? undefined : waiting.get(message.id);
    if (!caller) return;
    waiting.delete(message.id!);
    if (message.error) caller.reject(new Error(message.error.message));
    else caller.resolve(message.result);
  });
  socket.on("close", () => {
    for (const caller of waiting.values()) caller.reject(new Error("the inspector closed"));
    waiting.clear();
  });
  return {
    send: <T>(method: string, params: Record<string, unknown> = {}) =>
      new Promise<T>((resolve, reject) => {
        const id = next++;
        waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
        socket.send(JSON.stringify({ id, method, params }));
      }),
    close: () => socket.close(),
  };
}
