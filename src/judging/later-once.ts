/** Work deferred to a later turn of the event loop, shared by the processor and the adapter. */
import { diag } from '@opentelemetry/api';

/**
 * Runs `work` on a later turn of the event loop (or, with `queue: queueMicrotask`, as soon as the
 * code running now returns), once however often it is asked before then; whatever `work` throws
 * goes to `diag`, never to the host app.
 */
export class LaterOnce {
  private scheduled = false;

  constructor(
    private readonly work: () => void,
    private readonly failure: string,
    private readonly queue: (run: () => void) => unknown = setImmediate,
  ) {}

  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    this.queue(() => {
      this.scheduled = false;
      try {
        this.work();
      } catch (error) {
        diag.error(this.failure, error);
      }
    });
  }
}
