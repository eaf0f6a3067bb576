// The exact expected state of every (user, item) like edge the generator has
// touched. Each simulated user's requests are sequential, so the answer to a
// request says which state it started from; a request that got no answer
// (a reset connection, a crash) leaves the edge in one of two states until a
// later answer or has_liked settles it.

export type LikeStatus = "liked" | "already_liked" | "unliked" | "not_liked";

/** The states an edge may be in: exactly one when known, both while undecided. */
type Possible = { liked: boolean; notLiked: boolean };

export type Answer = { on: boolean; status: LikeStatus } | { on: boolean; status: null };

function statusFrom(on: boolean, wasLiked: boolean): LikeStatus {
  if (on) return wasLiked ? "already_liked" : "liked";
  return wasLiked ? "unliked" : "not_liked";
}

/** The state a status proves the edge started from, or undefined if the status cannot answer `on`. */
function priorOf(on: boolean, status: LikeStatus): boolean | undefined {
  for (const wasLiked of [false, true]) if (statusFrom(on, wasLiked) === status) return wasLiked;
  return undefined;
}

function apply(state: Possible, answer: Answer): Possible | null {
  if (answer.status === null) {
    return { liked: state.liked || answer.on, notLiked: state.notLiked || !answer.on };
  }
  const prior = priorOf(answer.on, answer.status);
  if (prior === undefined || !(prior ? state.liked : state.notLiked)) return null;
  return { liked: answer.on, notLiked: !answer.on };
}

export class LikeModel {
  readonly #edges = new Map<string, Map<string, Possible>>();

  #get(user: string, item: string): Possible {
    return this.#edges.get(item)?.get(user) ?? { liked: false, notLiked: true };
  }

  #set(user: string, item: string, state: Possible): void {
    let users = this.#edges.get(item);
    if (!users) this.#edges.set(item, (users = new Map()));
    users.set(user, state);
  }

  /** True, false, or undefined while the edge is undecided. */
  liked(user: string, item: string): boolean | undefined {
    const state = this.#get(user, item);
    return state.liked && state.notLiked ? undefined : state.liked;
  }

  /**
   * Records the answers to requests one user sent for one item, in flight
   * together (one request, or a request and its duplicate retry). Returns an
   * explanation when no order of them is consistent with the known state.
   */
  record(user: string, item: string, answers: readonly Answer[]): string | null {
    const before = this.#get(user, item);
    // Unanswered requests first: they may have landed at any time, and taking
    // them first is the most permissive order, which is exactly their meaning.
    const lost = answers.filter((a) => a.status === null);
    const seen = answers.filter((a) => a.status !== null);
    for (const order of permutations(seen)) {
      let state: Possible | null = before;
      for (const answer of [...lost, ...order]) {
        if (state) state = apply(state, answer);
      }
      if (state) {
        this.#set(user, item, state);
        return null;
      }
    }
    const expected = describe(before);
    const got = seen.map((a) => `${a.on ? "like" : "unlike"}→${a.status}`).join(", ");
    return `user ${user} item ${item}: edge was ${expected}, answers ${got}`;
  }

  /** Settles an edge from has_liked, which is exact. Returns an explanation if the answer is impossible. */
  settle(user: string, item: string, liked: boolean): string | null {
    const before = this.#get(user, item);
    if (!(liked ? before.liked : before.notLiked)) {
      return `user ${user} item ${item}: has_liked says ${liked} but the edge was ${describe(before)}`;
    }
    this.#set(user, item, { liked, notLiked: !liked });
    return null;
  }

  items(): string[] {
    return [...this.#edges.keys()];
  }

  /** Users with an edge on the item (any state). */
  usersOf(item: string): string[] {
    return [...(this.#edges.get(item)?.keys() ?? [])];
  }

  /** Every (user, item) still undecided. */
  undecided(): { user: string; item: string }[] {
    const out: { user: string; item: string }[] = [];
    for (const [item, users] of this.#edges) {
      for (const [user, state] of users) if (state.liked && state.notLiked) out.push({ user, item });
    }
    return out;
  }

  /** Users whose state is liked; undefined while any edge of the item is undecided. */
  expectedCount(item: string): number | undefined {
    let count = 0;
    for (const state of this.#edges.get(item)?.values() ?? []) {
      if (state.liked && state.notLiked) return undefined;
      if (state.liked) count++;
    }
    return count;
  }
}

function describe(state: Possible): string {
  if (state.liked && state.notLiked) return "undecided";
  return state.liked ? "liked" : "not liked";
}

function permutations<T>(list: readonly T[]): T[][] {
  if (list.length <= 1) return [[...list]];
  return list.flatMap((head, i) => permutations([...list.slice(0, i), ...list.slice(i + 1)]).map((rest) => [head, ...rest]));
}
