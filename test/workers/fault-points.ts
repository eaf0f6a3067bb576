/**
 * Faults injected into one Durable Object instance from a test, with nothing
 * in the production class: the method is wrapped once on the class's
 * prototype (RPC calls only reach methods declared there, never an
 * instance's own properties), and the wrapper acts only for the instances a
 * test picked. Call these inside `runInDurableObject`, with its instance.
 */

type Method = (...args: unknown[]) => unknown;

interface Fault {
  /** Calls wait while set (an object that hangs); cleared by `release`. */
  held: boolean;
  /** A held call fails once released, instead of running (an object that could not be reached). */
  failWhenReleased: boolean;
  /** The next N calls throw before running. */
  failBefore: number;
  /** The next N calls run, then throw (a reply lost on the way back). */
  failAfter: number;
}

const HELD_POLL_MS = 20;

const faults = new WeakMap<object, Map<string, Fault>>();
const wrapped = new WeakMap<object, Set<string>>();

function faultOf(instance: object, method: string): Fault {
  wrap(Object.getPrototypeOf(instance) as Record<string, Method>, method);
  const byMethod = faults.get(instance) ?? new Map<string, Fault>();
  faults.set(instance, byMethod);
  let fault = byMethod.get(method);
  if (!fault) {
    fault = { held: false, failWhenReleased: false, failBefore: 0, failAfter: 0 };
    byMethod.set(method, fault);
  }
  return fault;
}

function wrap(prototype: Record<string, Method>, method: string): void {
  const done = wrapped.get(prototype) ?? new Set<string>();
  wrapped.set(prototype, done);
  if (done.has(method)) return;
  done.add(method);
  const original = prototype[method]!;
  prototype[method] = function (this: object, ...args: unknown[]): unknown {
    const fault = faults.get(this)?.get(method);
    if (!fault) return original.apply(this, args);
    if (fault.held) return heldCall(this, fault, args);
    return afterFaults(this, fault, method, args);
  };

  // Polled on a timer of the call's own request: a promise resolved from
  // the test's request instead would be one the runtime sees no way of
  // settling, and it may cancel the call.
  async function heldCall(self: object, fault: Fault, args: unknown[]): Promise<unknown> {
    while (fault.held) await new Promise((resolve) => setTimeout(resolve, HELD_POLL_MS));
    if (fault.failWhenReleased) throw new Error(`injected: ${method} could not be reached`);
    return await afterFaults(self, fault, method, args);
  }

  function afterFaults(self: object, fault: Fault, name: string, args: unknown[]): unknown {
    if (fault.failBefore > 0) {
      fault.failBefore--;
      throw new Error(`injected ${name} failure`);
    }
    const result = original.apply(self, args);
    if (fault.failAfter <= 0) return result;
    fault.failAfter--;
    if (result instanceof Promise) {
      return result.then(() => {
        throw new Error(`injected lost reply of ${name}`);
      });
    }
    throw new Error(`injected lost reply of ${name}`);
  }
}

type Name<T> = Extract<keyof T, string>;

/** Calls of `method` wait until `release`; with `fail`, each then fails instead of running. */
export function hold<T extends object>(instance: T, method: Name<T>, { fail = false } = {}): void {
  const fault = faultOf(instance, method);
  fault.failWhenReleased = fail;
  fault.held = true;
}

/** Lets every held call of `method` go on. */
export function release<T extends object>(instance: T, method: Name<T>): void {
  faultOf(instance, method).held = false;
}

/** `hold` or `release`, as `held` says. */
export function setHeld<T extends object>(instance: T, method: Name<T>, held: boolean, options: { fail?: boolean } = {}): void {
  if (held) hold(instance, method, options);
  else release(instance, method);
}

/** The next `n` calls of `method` throw before they run (0 lets them all run again). */
export function failNext<T extends object>(instance: T, method: Name<T>, n: number): void {
  faultOf(instance, method).failBefore = n;
}

/** The next `n` calls of `method` run and then throw, as if their reply was lost. */
export function loseReplies<T extends object>(instance: T, method: Name<T>, n: number): void {
  faultOf(instance, method).failAfter = n;
}
