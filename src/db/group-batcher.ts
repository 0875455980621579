/**
 * Group commit for one kind of statement: calls that arrive while earlier ones
 * are in flight wait and go together, as one batch, when a slot frees. Under
 * load, N concurrent calls cost a handful of round trips instead of N (each
 * round trip is a socket write and read on both sides and, on the server, a
 * parse, a plan and a commit). An idle batcher sends a call at once, alone, so
 * it adds no latency when there is nothing to group.
 */

/** How one item of a batch ended. */
export type ItemOutcome<O> = { readonly ok: true; readonly value: O } | { readonly ok: false; readonly error: unknown };

/** What a {@link GroupBatcher} needs. */
export interface GroupBatcherOptions<I, O> {
  /**
   * Sends a batch; returns one outcome per input, in order. Throwing fails
   * every item of the batch with that error.
   */
  readonly send: (inputs: readonly I[]) => Promise<readonly ItemOutcome<O>[]>;
  /** Batches in flight at once; the rest wait and grow. */
  readonly maxInFlight: number;
  /** Items in one batch. */
  readonly maxBatch: number;
}

interface Waiting<I, O> {
  readonly input: I;
  readonly resolve: (value: O) => void;
  readonly reject: (error: unknown) => void;
}

/** Groups concurrent calls into batches, at most `maxInFlight` of them in flight. */
export class GroupBatcher<I, O> {
  readonly #options: GroupBatcherOptions<I, O>;
  readonly #waiting: Waiting<I, O>[] = [];
  #inFlight = 0;

  constructor(options: GroupBatcherOptions<I, O>) {
    if (!(options.maxInFlight >= 1 && options.maxBatch >= 1)) throw new RangeError('maxInFlight and maxBatch must be at least 1');
    this.#options = options;
  }

  /** Resolves with this input's outcome, once the batch that carried it is back. */
  submit(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#waiting.push({ input, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#inFlight < this.#options.maxInFlight && this.#waiting.length > 0) {
      this.#inFlight++;
      void this.#send(this.#waiting.splice(0, this.#options.maxBatch));
    }
  }

  async #send(batch: readonly Waiting<I, O>[]): Promise<void> {
    try {
      const outcomes = await this.#options.send(batch.map((waiting) => waiting.input));
      if (outcomes.length !== batch.length) throw new Error(`a batch of ${batch.length} came back with ${outcomes.length} outcomes`);
      batch.forEach((waiting, index) => {
        const outcome = outcomes[index]!;
        if (outcome.ok) waiting.resolve(outcome.value);
        else waiting.reject(outcome.error);
      });
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
    } finally {
      this.#inFlight--;
      this.#pump();
    }
  }
}
