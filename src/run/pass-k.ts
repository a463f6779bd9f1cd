/**
 * pass^k, tau-bench's measure of reliability: the chance that k trials of a task, drawn without
 * replacement from the n that ran, all pass, averaged over tasks. For one task with c passing
 * trials that is C(c, k) / C(n, k); tau-bench's `display_metrics` (tau_bench/run.py) averages it
 * over tasks. Pure functions of per-trial verdicts: no reports, no scenarios.
 */

/** One trial of a task: the task it ran (a dataset row, a task id) and whether it passed. */
export interface Trial {
  task: string;
  pass: boolean;
}

/** pass^k over a set of trials, with what was left out of it. */
export interface PassHatK {
  k: number;
  /** The mean over the tasks counted of C(c, k) / C(n, k); `null` when no task has k trials. */
  value: number | null;
  /** Tasks with at least k trials: the ones averaged. */
  tasks: number;
  /** Tasks with fewer than k trials: left out of the mean, counted here. */
  leftOut: number;
}

/**
 * C(c, k) / C(n, k): the chance that k of a task's n trials, drawn without replacement, are all
 * among its c passing ones. Computed as the product of (c - i) / (n - i), which never builds the
 * binomials (C(100, 50) is beyond exact doubles).
 */
export function allOfKPass(n: number, c: number, k: number): number {
  if (
    !Number.isInteger(n) ||
    !Number.isInteger(c) ||
    !Number.isInteger(k) ||
    k < 1 ||
    c < 0 ||
    c > n ||
    k > n
  )
    throw new RangeError(
      `allOfKPass: expected integers 0 <= c <= n and 1 <= k <= n; got n=${n}, c=${c}, k=${k}`,
    );
  let chance = 1;
  for (let i = 0; i < k; i++) chance *= (c - i) / (n - i);
  return chance;
}

/**
 * pass^k of these trials, grouped by task: the mean over tasks with at least k trials of
 * C(c, k) / C(n, k). Tasks with fewer than k trials are left out and counted in `leftOut`.
 * Each task's own n is used, so tasks need not have run the same number of times (tau-bench
 * assumes they did; where they did, the two agree).
 */
export function passHatK(trials: Iterable<Trial>, k: number): PassHatK {
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`passHatK: k must be an integer >= 1; got ${k}`);
  const byTask = new Map<string, { n: number; c: number }>();
  for (const trial of trials) {
    const counts = byTask.get(trial.task) ?? { n: 0, c: 0 };
    counts.n++;
    if (trial.pass) counts.c++;
    byTask.set(trial.task, counts);
  }
  let sum = 0;
  let tasks = 0;
  for (const { n, c } of byTask.values()) {
    if (n < k) continue;
    sum += allOfKPass(n, c, k);
    tasks++;
  }
  return { k, value: tasks === 0 ? null : sum / tasks, tasks, leftOut: byTask.size - tasks };
}
