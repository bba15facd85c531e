const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');

export function fmtBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

/**
 * A progress line on stderr: records, bytes and rates, with a bar when the total is known.
 * On a terminal it redraws in place a few times a second; otherwise it prints a line every few
 * seconds, so logs of unattended runs stay readable.
 */
export class Progress {
  private records = 0;
  private bytes = 0;
  private lastDraw = 0;
  private readonly started: number;

  constructor(
    private readonly out: { write(s: string): unknown; isTTY?: boolean },
    private readonly total: number | undefined,
    private readonly now: () => number = Date.now,
  ) {
    this.started = now();
  }

  add(records: number, bytes: number): void {
    this.records += records;
    this.bytes += bytes;
    const t = this.now();
    if (t - this.lastDraw >= (this.out.isTTY ? 200 : 5000)) {
      this.lastDraw = t;
      this.draw(false);
    }
  }

  line(): string {
    const s = Math.max(0.001, (this.now() - this.started) / 1000);
    const rate = `${fmtInt(this.records / s)} records/s, ${fmtBytes(this.bytes / s)}/s`;
    const counts = `${fmtInt(this.records)} records, ${fmtBytes(this.bytes)}`;
    if (!this.total) return `${counts} · ${rate}`;
    const ratio = Math.min(1, this.records / this.total);
    const width = 24;
    const filled = Math.round(ratio * width);
    return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${(ratio * 100).toFixed(0).padStart(3)}% ${counts} · ${rate}`;
  }

  draw(final: boolean): void {
    if (this.out.isTTY) this.out.write(`\r\x1b[2K${this.line()}${final ? '\n' : ''}`);
    else this.out.write(`${this.line()}\n`);
  }

  get counts(): { records: number; bytes: number } {
    return { records: this.records, bytes: this.bytes };
  }
}
