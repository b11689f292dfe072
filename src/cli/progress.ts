/** A progress bar on stderr, for files, when stderr is a terminal; redrawn at most 10 times a second. */
import { formatBytes } from './render.js';

export class Progress {
  private done = 0;
  private drawnAt = 0;

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly totalBytes: number,
  ) {}

  static forFiles(stream: NodeJS.WriteStream, totalBytes: number): Progress | undefined {
    return stream.isTTY && totalBytes > 0 ? new Progress(stream, totalBytes) : undefined;
  }

  advance(bytes: number): void {
    this.done += bytes;
    const now = Date.now();
    if (now - this.drawnAt < 100) return;
    this.drawnAt = now;
    const fraction = Math.min(1, this.done / this.totalBytes);
    const cells = 30;
    const filled = Math.round(fraction * cells);
    this.stream.write(
      `\r[${'#'.repeat(filled)}${'-'.repeat(cells - filled)}] ${(100 * fraction).toFixed(0).padStart(3)}% ` +
        `${formatBytes(this.done)} of ${formatBytes(this.totalBytes)}`,
    );
  }

  finish(): void {
    if (this.drawnAt > 0) this.stream.write('\r\x1b[K');
  }
}
