/**
 * The open connections of both receivers, under one cap (`limits.maxConnections`): each takes a
 * file descriptor, and a process out of them can neither accept nor open anything, on any port.
 * A connection past the cap is closed as soon as it is accepted, and counted.
 */
import type { Socket } from 'node:net';

/** Which receiver a connection came to. */
export type ReceiverName = 'http' | 'grpc';

/** See the module comment. */
export class ConnectionLimit {
  private openCount = 0;
  private refusedCount = 0;

  constructor(
    readonly max: number,
    /** Told of each connection refused (metrics). */
    private readonly onRefused?: (receiver: ReceiverName) => void,
  ) {}

  /** Takes a newly accepted connection, or closes it at once (counted) when `max` are open. */
  admit(socket: Socket, receiver: ReceiverName): boolean {
    if (this.openCount >= this.max) {
      this.refusedCount++;
      socket.destroy();
      try {
        this.onRefused?.(receiver);
      } catch {
        // A broken meter costs the count there, not the receiver.
      }
      return false;
    }
    this.openCount++;
    socket.once('close', () => this.openCount--);
    return true;
  }

  /** Connections open now. */
  get open(): number {
    return this.openCount;
  }

  /** Connections closed at once because `max` were open. */
  get refused(): number {
    return this.refusedCount;
  }
}
