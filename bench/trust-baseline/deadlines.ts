/**
 * A binary min-heap of (time, item): tick() pops only what is due instead of scanning every
 * candidate each second. Report receipt times may arrive out of order, so a FIFO would not do.
 */
export class Deadlines<T> {
  private readonly at: number[] = [];
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  push(time: number, item: T): void {
    let i = this.items.length;
    this.at.push(time);
    this.items.push(item);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.at[parent] <= time) break;
      this.at[i] = this.at[parent];
      this.items[i] = this.items[parent];
      i = parent;
    }
    this.at[i] = time;
    this.items[i] = item;
  }

  /** The earliest item whose time is ≤ now, removed; undefined when nothing is due. */
  popDue(now: number): T | undefined {
    if (this.items.length === 0 || this.at[0] > now) return undefined;
    const top = this.items[0];
    const lastAt = this.at.pop() ?? 0;
    const lastItem = this.items.pop();
    const n = this.items.length;
    if (n > 0 && lastItem !== undefined) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const child = r < n && this.at[r] < this.at[l] ? r : l;
        if (this.at[child] >= lastAt) break;
        this.at[i] = this.at[child];
        this.items[i] = this.items[child];
        i = child;
      }
      this.at[i] = lastAt;
      this.items[i] = lastItem;
    }
    return top;
  }
}
