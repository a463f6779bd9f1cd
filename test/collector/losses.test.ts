import { describe, expect, it } from 'vitest';
import { Losses } from '../../src/collector/losses.js';

describe('Losses', () => {
  it('says what was lost and why, in words, in the order first seen, adding up repeats', () => {
    const losses = new Losses();
    expect(losses.describe()).toBe('');
    losses.add('findings', 'forward_unsent_at_shutdown', 19_999);
    losses.add('spans', 'forward_queue_full', 1);
    losses.add('findings', 'forward_unsent_at_shutdown', 1);
    losses.add('reports', 'reports_file_behind', 0);
    expect(losses.describe()).toBe('20000 findings (next hop unreachable), 1 span (forward queue full)');
    expect(losses.list()).toEqual([
      { what: 'findings', why: 'forward_unsent_at_shutdown', count: 20_000 },
      { what: 'spans', why: 'forward_queue_full', count: 1 },
    ]);
  });
});
