/**
 * What code that begins work after its request needs of the runtime: a
 * request's, an object's or a handler's `waitUntil`. Structural, so code the
 * Node project type-checks can take it without the Worker's `ExecutionContext`.
 */
export type WaitUntil = { waitUntil(promise: Promise<unknown>): void };
