// Types of scripts/schedule.mjs (plain JavaScript, so `npm start` needs no build step).
export function readCrons(toml: string): string[];
export function cronMatcher(expression: string): (date: Date) => boolean;
export function runSchedule(crons: readonly string[], fire: (cron: string) => void, everySeconds?: number): () => void;
