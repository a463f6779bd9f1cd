import { describe, expect, it } from 'vitest';
import type { TypedEvent } from '../../src/model/typed-event.js';
import { trajectoryFromTypedEvents } from '../../src/normalizers/typed-events.js';

const call = (id: string, tool: string, args = {}): TypedEvent => ({ kind: 'call', id, tool, args });
const result = (callId: string, output = {}, ok = true): TypedEvent => ({
  kind: 'result',
  callId,
  ok,
  output,
});

describe('typed call/result events', () => {
  it('joins each result to its call by id, not by tool name', () => {
    const trajectory = trajectoryFromTypedEvents('t', [
      call('c1', 'search', { q: 'a' }),
      call('c2', 'search', { q: 'b' }),
      result('c2', { hits: 2 }),
      result('c1', { hits: 1 }),
    ]);
    expect(trajectory.call('c1')?.result).toEqual({ captured: true, value: { hits: 1 } });
    expect(trajectory.call('c2')?.result).toEqual({ captured: true, value: { hits: 2 } });
  });

  it('calls issued before any result are concurrent; a call after a result is after it', () => {
    const trajectory = trajectoryFromTypedEvents('t', [
      call('c1', 'get_order'),
      call('c2', 'get_refund_policy'),
      result('c1'),
      result('c2'),
      call('c3', 'issue_refund'),
      result('c3'),
    ]);
    const [c1, c2, c3] = ['c1', 'c2', 'c3'].map((id) => trajectory.call(id));
    if (!c1 || !c2 || !c3) throw new Error('missing calls');
    expect(trajectory.concurrent(c1, c2)).toBe(true);
    expect(trajectory.happensBefore(c1, c3)).toBe(true);
    expect(trajectory.happensBefore(c2, c3)).toBe(true);
    expect(trajectory.happensBefore(c3, c1)).toBe(false);
  });

  it('a failed result is an error outcome carrying its message', () => {
    const trajectory = trajectoryFromTypedEvents('t', [
      call('c1', 'pay'),
      result('c1', { error: 'card declined' }, false),
    ]);
    expect(trajectory.call('c1')?.outcome).toEqual({ status: 'error', message: 'card declined' });
  });

  it('reports duplicate ids, orphan and duplicate results, and calls without a result', () => {
    const trajectory = trajectoryFromTypedEvents('t', [
      call('c1', 'a'),
      call('c1', 'b'),
      result('zz'),
      result('c1'),
      result('c1'),
      call('c2', 'c'),
    ]);
    expect(trajectory.issues.map((issue) => issue.kind)).toEqual([
      'call.duplicate_id',
      'result.orphan',
      'result.duplicate',
      'call.no_result',
    ]);
    expect(trajectory.calls.map((c) => c.tool)).toEqual(['a', 'c']);
    expect(trajectory.call('c2')?.outcome).toEqual({ status: 'no_result' });
  });
});
