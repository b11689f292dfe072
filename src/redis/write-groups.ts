/**
 * Concurrent calls written to Redis in groups: the commands of one tick go out in writes of up
 * to GROUP commands each, not one write (one system call) per command.
 *
 * Why: with many calls in flight, a client on a machine it shares with redis-server spends most
 * of its time in the write of each command (bench/REPORT.md, 13.1: 54% of the client's time in
 * the socket write, 18 us of CPU per direct check). Writing a whole tick's commands at once
 * halves the client's CPU per call but makes the client and Redis take turns: Redis gets the
 * whole batch, the client waits for all of it, then Redis waits for the next (measured slower:
 * 20.8 against 18.3 us per call at 64 in flight). Groups keep both busy: Redis runs the first
 * group while the client makes the next, and the replies of the first come back while Redis
 * runs the second (12.6 us per call with groups of 16).
 *
 * It corks the connection's socket (Node's Writable.cork) for the commands of a group and
 * uncorks it once GROUP are written or at the end of the tick (process.nextTick, after the
 * promise continuations that make more calls). Only on a standalone client whose connection is
 * ready: a Cluster spreads commands over many sockets, and a client still connecting queues its
 * commands itself.
 */
import type { Writable } from 'node:stream';

/** What this file reads of an ioredis client: whether it is a Cluster, its status, its socket. */
export interface IoredisConnection {
  readonly isCluster?: boolean;
  readonly status?: string;
  readonly stream?: Writable;
}

const GROUP = 16;

export class WriteGroups {
  /** The socket corked for the group being written, or null. */
  private corked: Writable | null = null;
  private written = 0;
  private readonly endOfTick = () => this.flush();

  constructor(private readonly redis: IoredisConnection) {}

  /** Call right before sending a command: it goes out with its group. */
  next(): void {
    const corked = this.corked;
    if (corked !== null) {
      if (this.written < GROUP) {
        this.written++;
        return;
      }
      // A full group goes out now; the next one starts.
      corked.uncork();
      corked.cork();
      this.written = 1;
      return;
    }
    const redis = this.redis;
    if (redis.isCluster || redis.status !== 'ready') return;
    const socket = redis.stream;
    if (socket === undefined || !socket.writable) return;
    socket.cork();
    this.corked = socket;
    this.written = 1;
    process.nextTick(this.endOfTick);
  }

  private flush(): void {
    const corked = this.corked;
    if (corked === null) return;
    this.corked = null;
    this.written = 0;
    corked.uncork();
  }
}
