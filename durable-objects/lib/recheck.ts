import { config } from "../../shared/config";
import { EMISSION_VERSION, type RecheckRequest } from "../../shared/emissions";
import { log } from "../../shared/log";
import { sendToQueue } from "./queue-send";
import type { Alarm } from "./alarm";
import type { Emitter } from "./emitter";
import type { MeteredStorage } from "./metered-storage";
import { planRecheck, recheckSettings, rechecking, type RecheckMark, type RecheckSubject } from "./recheck-policy";

/**
 * A head's rechecks between reconciliation runs. The object cannot read the
 * stores (layering: they are the Worker's), so when one is due its alarm
 * sends one small RecheckRequest on the item's event queue, and the consumer
 * compares D1 and the central store with the object and repairs drift
 * (workers/pipeline/recheck.ts). Rides on the head's emissions and its one alarm. The mark of
 * the last request is stored (one row written per recheck): an evicted head
 * wakes to the same plan, and a large item that stopped changing stays quiet.
 */
export class Recheck {
  /** undefined: not read from storage yet. */
  #mark: RecheckMark | null | undefined;

  constructor(
    private readonly storage: MeteredStorage,
    private readonly env: Env,
    /** The item the head counts (its object name); undefined if the runtime did not say. */
    private readonly item: string | undefined,
    private readonly emitter: Pick<Emitter, "state">,
    private readonly wake: Pick<Alarm, "request">,
    /** The head's storage holds its tables, the item's placement and total likes, and its last write. */
    private readonly head: () => { ready: boolean; hot: boolean; likes: number; lastWriteAt: number | null },
  ) {}

  /** Rechecks are still to come: the head must keep its alarm. */
  get pending(): boolean {
    const subject = this.#subject();
    return subject !== null && rechecking(subject, this.#last(), recheckSettings(config(this.env)));
  }

  /** From the head's alarm, and after each emission it sends. Never throws: a failed request is made again an interval later. */
  async alarm(now = Date.now()): Promise<void> {
    const settings = recheckSettings(config(this.env));
    try {
      const subject = this.#subject();
      if (subject === null) return;
      const plan = planRecheck(now, subject, this.#last(), settings);
      if (plan.send) await this.#request(subject.item, plan.mark);
      if (plan.wakeAt !== null) this.wake.request(plan.wakeAt);
    } catch (error) {
      log("error", "recheck_request_failed", { error: String(error) });
      // The stored mark is unchanged, so the recheck is still due; asked again an interval on, not at once, while the queue is down.
      this.wake.request(now + settings.intervalMs);
    }
  }

  /** A send that succeeds and a mark that fails to commit only cost an extra check next time. */
  async #request(item: string, mark: RecheckMark): Promise<void> {
    const body: RecheckRequest = { v: EMISSION_VERSION, kind: "recheck", item };
    await sendToQueue(this.env, item, [body]);
    this.storage.commit(() =>
      this.storage.sql.exec(
        "INSERT INTO recheck (id, at, seq) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at, seq = excluded.seq",
        mark.at,
        mark.seq,
      ),
    );
    this.#mark = mark;
  }

  /** null: nothing to recheck (no tables yet, or no item name). */
  #subject(): (RecheckSubject & { item: string }) | null {
    const { ready, hot, likes, lastWriteAt } = this.head();
    if (!ready || this.item === undefined) return null;
    return { item: this.item, hot, likes, seq: this.emitter.state().seq, lastWriteAt };
  }

  #last(): RecheckMark | null {
    if (this.#mark === undefined) {
      const row = this.storage.sql.exec<RecheckMark>("SELECT at, seq FROM recheck").toArray()[0];
      this.#mark = row ? { at: row.at, seq: row.seq } : null;
    }
    return this.#mark;
  }
}
