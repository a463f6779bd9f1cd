/**
 * The open connections of both receivers, under one cap: `limits.maxConnections`, or fewer when
 * the process's open-file limit leaves less room (each connection takes a file descriptor, and a
 * process out of them can neither accept nor open anything, on any port).
 *
 * At the cap a new connection is not refused: the longest-idle connection is closed to make room
 * (counted), so idle sockets cannot lock the next real client out. Idle first: no request in
 * flight (an HTTP request whose headers dribble in has none yet), the longest since its last
 * request, or since it opened; then those whose request is still arriving (a body that stalls),
 * the oldest first. A connection whose request has all arrived, and waits for its answer, is never
 * closed for room. Each port keeps a share of the cap (a tenth): a flood on one closes the other's
 * connections only while it holds more than that, so an HTTP flood cannot lock gRPC clients out,
 * nor the reverse. Only with nothing to close is a new connection refused (closed at once, counted).
 *
 * Sockets are counted here as they come and go (exact, and free); the files open besides them
 * (logs, the next hop, listeners) are read from /proc/self/fd, which costs milliseconds, only
 * near the cap and at most once a second, with a margin left for files opened between readings.
 */
import { openFileCount, openFileLimit } from './open-files.js';

/** Which receiver a connection came to. */
export type ReceiverName = 'http' | 'grpc';

/** What a connection closed to make room was doing. */
export type EvictedState = 'idle' | 'receiving';

/** One request (HTTP) or call (gRPC) on an admitted connection, as it progresses. */
export interface RequestProgress {
  /** All of it has arrived: the answer is being worked out. */
  received(): void;
  /** Answered, or abandoned. */
  done(): void;
}

/** An admitted connection, told of its requests so the idle ones can be told apart. */
export interface AdmittedConnection {
  request(): RequestProgress;
}

/** What a connection is to the cap (a `net.Socket`): closed by `destroy()`, saying `close` once closed. */
export interface Closable {
  destroy(): void;
  once(event: 'close', listener: () => void): unknown;
}

/** Where the open-file limit and count come from (the process's own, through /proc, by default). */
export interface OpenFiles {
  limit(): number;
  count(): number | undefined;
}

export interface ConnectionEvents {
  /** Told of each connection refused (metrics). */
  onRefused?: (receiver: ReceiverName) => void;
  /** Told of each connection closed to make room (metrics). */
  onEvicted?: (receiver: ReceiverName, state: EvictedState) => void;
}

const RECEIVERS: readonly ReceiverName[] = ['http', 'grpc'];
/** The share of the cap each port keeps against a flood on the other. */
const PORT_SHARE = 0.1;
/** How often, at most, the open files are counted again while near the cap. */
const SAMPLE_MS = 1000;
/** Counted again once the connections reach this share of the room the files leave. */
const NEAR = 0.8;
/** File descriptors kept free for what opens between two counts (segments, sockets to the next hop). */
const fileMargin = (limit: number) => Math.max(32, Math.floor(limit / 20));

const systemOpenFiles: OpenFiles = { limit: () => openFileLimit(), count: () => openFileCount() };

type Phase = 'idle' | 'receiving' | 'working';

class Tracked implements AdmittedConnection {
  receiving = 0;
  working = 0;
  phase: Phase = 'idle';
  /** When it entered its phase, in the order of all such moves (ties broken, unlike a clock). */
  entered: number;
  gone = false;
  constructor(
    readonly owner: ConnectionLimit,
    readonly socket: Closable,
    readonly receiver: ReceiverName,
    entered: number,
  ) {
    this.entered = entered;
  }

  request(): RequestProgress {
    let state: 'receiving' | 'working' | 'done' = 'receiving';
    this.receiving++;
    this.owner.moved(this);
    return {
      received: () => {
        if (state !== 'receiving') return;
        state = 'working';
        this.receiving--;
        this.working++;
        this.owner.moved(this);
      },
      done: () => {
        if (state === 'done') return;
        if (state === 'receiving') this.receiving--;
        else this.working--;
        state = 'done';
        this.owner.moved(this);
      },
    };
  }
}

/** See the module comment. */
export class ConnectionLimit {
  private openCount = 0;
  private refusedCount = 0;
  private evictedCount = 0;
  private moves = 0;
  private readonly perReceiver: Record<ReceiverName, number> = { http: 0, grpc: 0 };
  /** Evictable connections by receiver and phase, in the order they entered it: oldest first. */
  private readonly queues: Record<ReceiverName, Record<EvictedState, Set<Tracked>>> = {
    http: { idle: new Set(), receiving: new Set() },
    grpc: { idle: new Set(), receiving: new Set() },
  };
  private fileLimit: number;
  /** Files open that are not our connections, at the last count. */
  private otherFiles = 0;
  private countedAt = Number.NEGATIVE_INFINITY;

  constructor(
    readonly max: number,
    private readonly events: ConnectionEvents = {},
    private readonly files: OpenFiles = systemOpenFiles,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.fileLimit = files.limit();
    this.countFiles();
  }

  /**
   * Takes a newly accepted connection, closing the longest-idle ones when at the cap; or closes
   * it at once (counted) when none can be closed.
   */
  admit(socket: Closable, receiver: ReceiverName): AdmittedConnection | undefined {
    if (this.openCount >= NEAR * this.fileRoom() && this.now() - this.countedAt >= SAMPLE_MS)
      this.countFiles();
    const cap = this.capacity;
    while (this.openCount >= cap) {
      const victim = this.victim(receiver, cap);
      if (victim === undefined) {
        this.refusedCount++;
        socket.destroy();
        this.tell(() => this.events.onRefused?.(receiver));
        return undefined;
      }
      const state = victim.phase === 'receiving' ? 'receiving' : 'idle';
      this.release(victim);
      victim.socket.destroy();
      this.evictedCount++;
      this.tell(() => this.events.onEvicted?.(victim.receiver, state));
    }
    const tracked = new Tracked(this, socket, receiver, this.moves++);
    this.openCount++;
    this.perReceiver[receiver]++;
    this.queues[receiver].idle.add(tracked);
    socket.once('close', () => this.release(tracked));
    return tracked;
  }

  /** Connections open now. */
  get open(): number {
    return this.openCount;
  }

  /** Connections closed at once because the cap was reached and none could be closed for them. */
  get refused(): number {
    return this.refusedCount;
  }

  /** Connections closed, longest idle first, to make room for new ones. */
  get evicted(): number {
    return this.evictedCount;
  }

  /** The cap now: `max`, or the room the open-file limit leaves when that is less (at least 2). */
  get capacity(): number {
    return Math.min(this.max, Math.max(2, this.fileRoom()));
  }

  /** The open-file limit (Infinity when unknown). */
  get openFileLimit(): number {
    return this.fileLimit;
  }

  /** @internal A connection's requests changed: it goes to the back of the queue of its phase. */
  moved(tracked: Tracked): void {
    if (tracked.gone) return;
    if (tracked.phase !== 'working') this.queues[tracked.receiver][tracked.phase].delete(tracked);
    tracked.phase = tracked.working > 0 ? 'working' : tracked.receiving > 0 ? 'receiving' : 'idle';
    tracked.entered = this.moves++;
    if (tracked.phase !== 'working') this.queues[tracked.receiver][tracked.phase].add(tracked);
  }

  /** The connection to close for one on `receiver`: idle before receiving, oldest first. */
  private victim(receiver: ReceiverName, cap: number): Tracked | undefined {
    const share = Math.max(1, Math.floor(cap * PORT_SHARE));
    for (const phase of ['idle', 'receiving'] as const) {
      let oldest: Tracked | undefined;
      for (const other of RECEIVERS) {
        if (other !== receiver && this.perReceiver[other] <= share) continue;
        const first = this.queues[other][phase].values().next().value;
        if (first !== undefined && (oldest === undefined || first.entered < oldest.entered)) oldest = first;
      }
      if (oldest !== undefined) return oldest;
    }
    return undefined;
  }

  private release(tracked: Tracked): void {
    if (tracked.gone) return;
    tracked.gone = true;
    this.openCount--;
    this.perReceiver[tracked.receiver]--;
    if (tracked.phase !== 'working') this.queues[tracked.receiver][tracked.phase].delete(tracked);
  }

  private fileRoom(): number {
    if (!Number.isFinite(this.fileLimit)) return Number.POSITIVE_INFINITY;
    return this.fileLimit - this.otherFiles - fileMargin(this.fileLimit);
  }

  private countFiles(): void {
    this.countedAt = this.now();
    this.fileLimit = this.files.limit();
    if (!Number.isFinite(this.fileLimit)) return;
    const count = this.files.count();
    if (count !== undefined) this.otherFiles = Math.max(0, count - this.openCount);
  }

  private tell(event: () => void): void {
    try {
      event();
    } catch {
      // A broken meter costs the count there, not the receiver.
    }
  }
}
