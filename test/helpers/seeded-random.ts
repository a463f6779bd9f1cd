/** A small deterministic PRNG (mulberry32): numbers in [0, 1) from a seed, so a failure replays. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The random source of a chaos test: seeded from `TOOLPATH_CHAOS_SEED` when set, else a new seed,
 * printed either way with the command that replays it (the kill moments and batch sizes repeat;
 * the machine's timing does not).
 */
export function chaosRandom(file: string): { seed: number; random: () => number } {
  const given = process.env.TOOLPATH_CHAOS_SEED;
  const seed =
    given !== undefined && given !== '' ? Number(given) >>> 0 : (Date.now() ^ (process.pid << 8)) >>> 0;
  console.log(`${file}: chaos seed ${seed} (replay: TOOLPATH_CHAOS_SEED=${seed} npx vitest run ${file})`);
  return { seed, random: seededRandom(seed) };
}
