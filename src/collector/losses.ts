/**
 * What the service lost: output it made and could not deliver or keep (findings and spans for
 * the next hop, report lines), by what and why. The adapter, the reports file and whatever else
 * holds output add to one ledger; `toolpath serve` says it in words when it stops.
 */

/** What was lost. */
export type LostItem = 'findings' | 'spans' | 'reports';

/** Why: each reason in the words the stop line uses. */
export const LOSS_REASONS = {
  forward_queue_full: 'forward queue full',
  forward_failed: 'next hop refused every attempt',
  forward_unsent_at_shutdown: 'next hop unreachable',
  reports_file_behind: 'reports file fell behind',
  storage_forced_out: 'forced out of storage at storage.maxBytes before a restart',
} as const;

/** Why something was lost. */
export type LossReason = keyof typeof LOSS_REASONS;

/** One kind of loss, and how many. */
export interface Loss {
  readonly what: LostItem;
  readonly why: LossReason;
  readonly count: number;
}

/** The ledger: counts by what and why, in the order they were first seen. */
export class Losses {
  private readonly counts = new Map<string, Loss>();

  add(what: LostItem, why: LossReason, count: number): void {
    if (!(count > 0)) return;
    const key = `${what} ${why}`;
    const known = this.counts.get(key);
    this.counts.set(key, { what, why, count: (known?.count ?? 0) + count });
  }

  /** Every loss so far. */
  list(): readonly Loss[] {
    return [...this.counts.values()];
  }

  /** `20000 findings (next hop unreachable), 3 spans (forward queue full)`; empty when nothing was lost. */
  describe(): string {
    return this.list()
      .map(
        (loss) =>
          `${loss.count} ${loss.count === 1 ? singular(loss.what) : loss.what} (${LOSS_REASONS[loss.why]})`,
      )
      .join(', ');
  }
}

function singular(what: LostItem): string {
  return what === 'findings' ? 'finding' : what === 'spans' ? 'span' : 'report';
}
