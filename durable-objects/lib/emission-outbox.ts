import type { EdgeChange } from "../../shared/edges";
import type { EmittedEdge } from "../../shared/emissions";
import type { Sql } from "./metered-storage";
import type { StateRow } from "./state-row";

export type EdgeRow = { user: string; counter: EdgeChange["counter"]; state: 0 | 1; inc: number; seq: number; at: number };

/**
 * The emission outbox as stored, in three columns of the owner's state row
 * (`emit_seq`, `emit_acked_seq`, `emit_edges`): the count snapshot's
 * sequence, the newest one acknowledged, and each edge's newest
 * unacknowledged version. A change and an acknowledgement rewrite that row
 * once per commit, together with the counts the same commit changed, instead
 * of inserting and deleting a row per edge or writing a row of its own.
 */
export type Outbox = { seq: number; ackedSeq: number; edges: Map<string, EdgeRow> };

export const edgeKey = (user: string, counter: string) => `${user}\u0000${counter}`;

/** The emitter's outbox: read once, copied for a commit, written with the state row at the commit's end. */
export class EmissionOutbox {
  /** The outbox as last committed (null: not read yet), and the commit in progress's copy of it. */
  #stored: Outbox | null = null;
  #draft: Outbox | null = null;

  constructor(
    private readonly sql: Sql,
    private readonly row: StateRow,
    /** The owner's storage holds the table (false before its first write). */
    private readonly ready: () => boolean,
  ) {}

  /** The outbox as committed; read from storage once (an object without a schema has an empty one). */
  committed(): Outbox {
    if (this.#stored) return this.#stored;
    if (!this.ready()) return { seq: 0, ackedSeq: 0, edges: new Map() };
    const row = this.sql
      .exec<{ seq: number; acked_seq: number; edges: string }>("SELECT emit_seq AS seq, emit_acked_seq AS acked_seq, emit_edges AS edges FROM state")
      .toArray()[0];
    const edges = new Map<string, EdgeRow>();
    for (const [user, counter, state, inc, seq, at] of JSON.parse(row?.edges ?? "[]") as EmittedEdge[]) {
      edges.set(edgeKey(user, counter), { user, counter, state, inc, seq, at: at ?? 0 });
    }
    return (this.#stored = { seq: row?.seq ?? 0, ackedSeq: row?.acked_seq ?? 0, edges });
  }

  /** Inside a commit: this commit's view; outside one, the committed outbox. */
  current(): Outbox {
    return this.#draft ?? this.committed();
  }

  /** Inside the owner's commit: this commit's copy of the outbox, written once at its end. */
  edit(): Outbox {
    if (this.#draft) return this.#draft;
    const committed = this.committed();
    const draft: Outbox = { ...committed, edges: new Map(committed.edges) };
    this.row.stage("emission", {
      columns: () => columns(draft),
      committed: () => {
        this.#stored = draft;
        this.#draft = null;
      },
      discarded: () => {
        this.#draft = null;
      },
    });
    return (this.#draft = draft);
  }
}

function columns(outbox: Outbox): Record<string, SqlStorageValue> {
  const edges: EmittedEdge[] = [...outbox.edges.values()].map((row) => [row.user, row.counter, row.state, row.inc, row.seq, row.at]);
  return { emit_seq: outbox.seq, emit_acked_seq: outbox.ackedSeq, emit_edges: JSON.stringify(edges) };
}
