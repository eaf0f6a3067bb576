// The cron schedule of wrangler.toml, fired locally: `wrangler dev
// --test-scheduled` runs the scheduled handler on a request to /__scheduled,
// and Cloudflare runs it at each time a cron expression matches (UTC). This
// module reads the crons, tells when one matches, and calls /__scheduled then.

const FIELDS = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12 },
  { min: 0, max: 7 },
];
const NAMES = [{}, {}, {}, { JAN: 1, FEB: 2, MAR: 3, APR: 4, MAY: 5, JUN: 6, JUL: 7, AUG: 8, SEP: 9, OCT: 10, NOV: 11, DEC: 12 }, { SUN: 0, MON: 1, TUE: 2, WED: 3, THU: 4, FRI: 5, SAT: 6 }];

/** The `crons = [...]` of wrangler.toml's [triggers]. */
export function readCrons(toml) {
  const triggers = toml.match(/^\[triggers\][^[]*?^crons\s*=\s*\[([^\]]*)\]/ms);
  if (!triggers) return [];
  return [...triggers[1].matchAll(/"([^"]+)"/g)].map((m) => m[1]);
}

function value(text, field) {
  const named = NAMES[field][text.toUpperCase()];
  const n = named ?? Number(text);
  if (!Number.isInteger(n) || n < FIELDS[field].min || n > FIELDS[field].max) throw new Error(`bad cron value "${text}"`);
  return n;
}

/** The set of values one field of a cron expression allows (`*`, `a`, `a-b`, `/n` steps, lists). */
function allowed(text, field) {
  const { min, max } = FIELDS[field];
  const values = new Set();
  for (const part of text.split(",")) {
    const [range, stepText] = part.split("/");
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1) throw new Error(`bad cron step "${part}"`);
    let [from, to] = [min, max];
    if (range !== "*") {
      const [a, b] = range.split("-");
      from = value(a, field);
      to = b === undefined ? (stepText === undefined ? from : max) : value(b, field);
    }
    for (let n = from; n <= to; n += step) values.add(field === 4 && n === 7 ? 0 : n);
  }
  return values;
}

/** A matcher for a five-field cron expression; throws on one it cannot read. */
export function cronMatcher(expression) {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5) throw new Error(`a cron expression has five fields: "${expression}"`);
  const [minute, hour, day, month, weekday] = parts.map((part, field) => allowed(part, field));
  // As in cron: when both day fields are restricted, either matching is enough.
  const either = parts[2] !== "*" && parts[4] !== "*";
  return (date) => {
    const dayOk = either
      ? day.has(date.getUTCDate()) || weekday.has(date.getUTCDay())
      : day.has(date.getUTCDate()) && weekday.has(date.getUTCDay());
    return minute.has(date.getUTCMinutes()) && hour.has(date.getUTCHours()) && month.has(date.getUTCMonth() + 1) && dayOk;
  };
}

/**
 * Calls `fire(cron)` for each cron at each minute it matches, or, with
 * `everySeconds`, every that many seconds (a short schedule for tests and
 * demos). Returns a function that stops it.
 */
export function runSchedule(crons, fire, everySeconds) {
  if (everySeconds) {
    const timer = setInterval(() => crons.forEach(fire), everySeconds * 1000);
    return () => clearInterval(timer);
  }
  const matchers = crons.map((cron) => ({ cron, matches: cronMatcher(cron) }));
  let timer;
  const next = () => {
    const now = Date.now();
    timer = setTimeout(() => {
      const minute = new Date(Math.round(Date.now() / 60_000) * 60_000);
      for (const { cron, matches } of matchers) if (matches(minute)) fire(cron);
      next();
    }, 60_000 - (now % 60_000));
  };
  next();
  return () => clearTimeout(timer);
}
