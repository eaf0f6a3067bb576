/**
 * Faults injected into one Durable Object instance from a test, with nothing
 * in the production class: the method is wrapped once on the class's
 * prototype (RPC calls only reach methods declared there, never an
 * instance's own properties), and the wrapper acts only for the instances a
 * test picked. Call these inside `runInDurableObject`, with its instance.
 */

import type { Emitter } from "../../durable-objects/lib/emitter";
import type { Handover, HeadParts } from "../../durable-objects/lib/handover";
import type { Emission } from "../../shared/emissions";

type Method = (...args: unknown[]) => unknown;

interface Fault {
  /** Calls wait while set (an object that hangs); cleared by `release`. */
  held: boolean;
  /** A held call fails once released, instead of running (an object that could not be reached). */
  failWhenReleased: boolean;
  /** Calls that arrived while held, released or not. */
  heldCalls: number;
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
    fault = { held: false, failWhenReleased: false, heldCalls: 0, failBefore: 0, failAfter: 0 };
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
    fault.heldCalls++;
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

/** How many calls of `method` arrived while it was held: a caller that gave up on a hung call and sent it again shows as more than one. */
export function heldCalls<T extends object>(instance: T, method: Name<T>): number {
  return faultOf(instance, method).heldCalls;
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

/** How many of the failures `failNext` asked for are still to come: 0 once that many calls were refused. */
export function failuresLeft<T extends object>(instance: T, method: Name<T>): number {
  return faultOf(instance, method).failBefore;
}

/** The next `n` calls of `method` run and then throw, as if their reply was lost. */
export function loseReplies<T extends object>(instance: T, method: Name<T>, n: number): void {
  faultOf(instance, method).failAfter = n;
}

type Send = (item: string, bodies: readonly Emission[]) => Promise<void>;

/** What an item object's emitter does with its next sends: fail them (a queue that is down), lose them, or keep them for the test. */
export type SendFaults = { failures: number; drops: number; diverts: number; readonly diverted: Emission[] };

const sendFaults = new WeakMap<Emitter, SendFaults>();

/**
 * The send faults of one emitter (all 0 until a test sets them). The
 * emitter's send is the function its object gave it, so it is swapped on
 * this emitter alone; a new instance of the object gets the real one.
 */
export function emitterSends(emitter: Emitter): SendFaults {
  const known = sendFaults.get(emitter);
  if (known) return known;
  const faults: SendFaults = { failures: 0, drops: 0, diverts: 0, diverted: [] };
  sendFaults.set(emitter, faults);
  const holder = emitter as unknown as { send: Send };
  const send = holder.send;
  holder.send = async (item, bodies) => {
    if (faults.failures > 0) {
      faults.failures--;
      throw new Error("injected queue failure");
    }
    if (faults.drops > 0) faults.drops--;
    else if (faults.diverts > 0) {
      faults.diverts--;
      faults.diverted.push(...bodies);
    } else await send(item, bodies);
  };
  return faults;
}

const stoppedHandovers = new WeakSet<Handover>();

/**
 * Stops one head's hand-over after a step, as a crash there would: after
 * "mark" its batch is stored and no child is asked to adopt it; after
 * "adopt" the children hold the edges and the head never finishes. The run
 * then waits until the test aborts the object; `handoverStopped` says it got there.
 */
export function stopHandover(handover: Handover, step: "mark" | "adopt"): void {
  const parts = (handover as unknown as { head: HeadParts }).head;
  const adopt = parts.adopt;
  const stop = async (): Promise<never> => {
    stoppedHandovers.add(handover);
    for (;;) await new Promise((resolve) => setTimeout(resolve, HELD_POLL_MS));
  };
  parts.adopt = async (child, edges) => {
    if (step === "adopt") await adopt(child, edges);
    return await stop();
  };
}

/** Whether a hand-over `stopHandover` set up reached its stop. */
export function handoverStopped(handover: Handover): boolean {
  return stoppedHandovers.has(handover);
}
