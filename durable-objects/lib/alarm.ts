import type { MeteredStorage } from "./metered-storage";

/**
 * An object's one alarm, shared by its parts (the emitter, the hot policy,
 * the hand-over, the recheck, the user's outbox, a removal). Each part
 * registers whether it still needs the alarm, and asks for the time it next
 * needs it: the earliest request wins, the owner's alarm() runs every part,
 * and each asks again for its next time, so an early wake-up only runs a
 * check early. `settle()` is the one place an object lets its alarm go: once
 * no part needs it, so an idle object keeps none and nothing wakes it until
 * its next write.
 */
export class Alarm {
  readonly #parts: (() => boolean)[] = [];

  constructor(private readonly storage: MeteredStorage) {}

  /** A part of the object that may need the alarm, and how it says it still does. */
  register(needs: () => boolean): void {
    this.#parts.push(needs);
  }

  /** Some part still needs the alarm. */
  get needed(): boolean {
    return this.#parts.some((needs) => needs());
  }

  /** Wakes the object at `at` at the latest: an alarm set for later is brought forward. */
  request(at: number): void {
    const current = this.storage.alarmAt;
    if (current === null || current > at) this.storage.setAlarm(at);
  }

  /** An alarm at `at` unless one is set already: a safety sweep, which any alarm serves. */
  ensure(at: number): void {
    if (this.storage.alarmAt === null) this.storage.setAlarm(at);
  }

  /** The alarm at exactly `at`: an owner's alarm() re-arming for its next step. */
  set(at: number): void {
    this.storage.setAlarm(at);
  }

  /** Clears the alarm once no part needs it. */
  settle(): void {
    if (!this.needed) this.storage.clearAlarm();
  }
}
