// The scenarios `npm run bench -- --scenario <name>` can run: a weighted mix
// of operations, and an optional seeding phase before the clock starts.
import { feedRead, countRead, hasLikedRead, likeOrUnlike, writeToggle, type Operation, type RunContext } from "./operations";

export type Scenario = {
  name: string;
  description: string;
  mix: readonly { op: Operation; weight: number }[];
  /** Likes spread over users and items before the timed phase, so reads have something to count. */
  seedLikes: boolean;
  /** Items in play unless --items says otherwise. */
  items: number;
  /** The reference Workers (bench/reference/) this scenario is compared with under --reference. */
  references: readonly string[];
};

export const SCENARIOS: Record<string, Scenario> = {
  write: {
    name: "write",
    description: "users like and unlike Zipf-distributed items, with duplicate retries; one hot item takes --hot-share of writes",
    mix: [{ op: likeOrUnlike, weight: 1 }],
    seedLikes: false,
    items: 200,
    references: ["noop", "like", "front", "contract", "converging", "pipeline", "front-pipeline"],
  },
  feed: {
    name: "feed",
    description: "POST /v1/counts batches of 50 Zipf-distributed items of a long tail, objects cold, every count checked exactly (no writes run)",
    mix: [{ op: feedRead, weight: 1 }],
    seedLikes: true,
    items: 5_000,
    references: ["noop", "feed"],
  },
  mixed: {
    name: "mixed",
    description: "reads to writes 100:1: feed batches, single counts and has_liked, with likes and unlikes",
    mix: [
      { op: feedRead, weight: 60 },
      { op: countRead, weight: 30 },
      { op: hasLikedRead, weight: 10 },
      { op: likeOrUnlike, weight: 1 },
    ],
    seedLikes: true,
    items: 200,
    references: ["noop"],
  },
};

export function pick(mix: Scenario["mix"], random: () => number): Operation {
  const total = mix.reduce((sum, m) => sum + m.weight, 0);
  let u = random() * total;
  for (const m of mix) {
    if ((u -= m.weight) < 0) return m.op;
  }
  return mix[mix.length - 1]!.op;
}

/** One like per seeded edge; the caller gives each worker its own users, so each user stays sequential. */
export async function seedLike(ctx: RunContext, user: string): Promise<void> {
  const item = ctx.picker.forWrite();
  if (ctx.model.liked(user, item) === true) return;
  await writeToggle(ctx, user, item, true);
}
