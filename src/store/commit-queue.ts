/**
 * Group commit: appends made while a flush waits for the disk are queued and made durable
 * together by the next flush (one fsync, one commit), in the order they were made. Each append
 * resolves with its own part of the flush once that flush is durable.
 *
 * A failed flush fails its appends and every append queued behind it: those were made after
 * records that never landed (a writer encodes each record against the ones before it), so they
 * must not land either. The store is then as it was before the failed flush.
 */
export class CommitQueue<Unit, Receipt> {
  private queued: Array<{ unit: Unit; resolve: (receipt: Receipt) => void; reject: (error: unknown) => void }> = [];
  private flushing = false;
  /** How many flushes wrote more than one unit: appends that shared an fsync (for tests and figures). */
  groupedFlushes = 0;

  constructor(private readonly flush: (units: Unit[]) => Promise<Receipt[]>) {}

  /** Whether a flush is waiting for the disk (an append now would be queued behind it). */
  get busy(): boolean {
    return this.flushing;
  }

  submit(unit: Unit): Promise<Receipt> {
    return new Promise<Receipt>((resolve, reject) => {
      this.queued.push({ unit, resolve, reject });
      if (!this.flushing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queued.length > 0) {
        const batch = this.queued;
        this.queued = [];
        if (batch.length > 1) this.groupedFlushes += 1;
        let receipts: Receipt[];
        try {
          receipts = await this.flush(batch.map((entry) => entry.unit));
        } catch (error) {
          const behind = this.queued;
          this.queued = [];
          for (const entry of [...batch, ...behind]) entry.reject(error);
          continue;
        }
        batch.forEach((entry, index) => void entry.resolve(receipts[index]!));
      }
    } finally {
      this.flushing = false;
    }
  }
}
