/**
 * The limiting reverse proxy: node:http in front of one upstream, with limits per key decided
 * before the upstream is touched (503 when a key has too many requests in progress, 429 when
 * its rate is too high) by the same rules as the middleware (http/rate-limit.ts,
 * http/inflight-limit.ts), then the request forwarded (forward.ts) on undici's Pool.
 *
 * Each limit applies to the paths under its `prefix` and counts under its own key kind (client
 * IP, a header); a request meets every limit whose prefix it falls under. Inflight limits are
 * entered first, so that a request refused for its rate holds no place for long, and a request
 * refused by one is counted by no rate.
 *
 * WebSocket (and any HTTP/1.1) upgrades pass through under the same limits: the guard is held
 * as long as the tunnel is open. Shutdown (`close`) stops accepting, lets requests in progress
 * finish until a deadline, then cuts what is left.
 *
 * Facing clients it does not trust, before any limit is counted:
 * - framing two parsers could read differently (request smuggling) is answered 400 and the
 *   connection closed (header-fields.ts says why node:http's own check is not relied on alone);
 * - a head over `maxHeaderSize` is node:http's 431, a target over `maxUrlLength` a 414;
 * - a client slow to send its head is cut after `headersTimeout`, its whole request after
 *   `requestTimeout`, an idle keep-alive connection after `keepAliveTimeout` (node:http checks
 *   these every second here, not every 30 s as by default, so a slowloris holds a socket for
 *   `headersTimeout` and about a second more);
 * - past `maxConnections` open client connections, a new connection's request is answered 503
 *   and the connection closed; past twice as many, a new connection is closed unanswered, so
 *   that a flood costs no more than the sockets the kernel hands over;
 * - the upstream gets at most `upstreamConnections` connections whatever the load: requests
 *   past them wait in the pool's queue, which the client connections bound.
 */
import { once } from 'node:events';
import {
  createServer,
  type IncomingMessage,
  request,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { Socket } from 'node:net';
import {
  checkOptionNames,
  InflightGuard,
  integerIn,
  type Key,
  rangeError,
  typeError,
  UNSHARED_SKETCH_OPTION_NAMES,
} from '../core.js';
import { checkFunction, fail } from '../http/middleware.js';
import { problemBody, type Refusal, refuse, setField } from '../http/responses.js';
import {
  Exchange,
  type ExchangeOwner,
  TIMED_OUT,
  type Upstream,
  upstreamFailure,
} from './forward.js';
import { addMember, requestFields, upgradeFields } from './header-fields.js';
import {
  type LimitMakers,
  type LimitShared,
  ProxyLimit,
  type ProxyLimitOptions,
} from './proxy-limit.js';
import { Traffic } from './traffic.js';
import { Pool } from './undici.js';

/**
 * Options of `new LimitingProxy`: the upstream, the limits, the clients and connections, and
 * the sketches' options (LimitSketchOptions, for every limit).
 */
export interface ProxyOptions extends LimitShared, LimitMakers {
  /** Where requests go: http://HOST:PORT. */
  upstream: string | URL;
  /** The limits, each with a distinct name. Default none: every request goes through. */
  limits?: ProxyLimitOptions[];
  /** How long the upstream may stay silent before a 504. Default 30,000 ms. */
  timeoutMs?: number;
  /** Most connections open to the upstream at once. Default 256. */
  upstreamConnections?: number;
  /** Most client connections open at once; more are answered 503. Default 10,000. */
  maxConnections?: number;
  /** How long a client has to send its request's head. Default 10,000 ms. */
  headersTimeout?: number;
  /** How long a client has to send its whole request, body included. Default 60,000 ms. */
  requestTimeout?: number;
  /** How long an idle keep-alive client connection stays open. Default 5,000 ms. */
  keepAliveTimeout?: number;
  /** Most bytes of a request's head (request line and fields); more get 431. Default 16 KiB. */
  maxHeaderSize?: number;
  /** Most characters of a request target (path and query); more get 414. Default 8,192. */
  maxUrlLength?: number;
}

/** The options about clients and connections, with their defaults (the CLI's help says them). */
export const SERVER_DEFAULTS = {
  upstreamConnections: 256,
  maxConnections: 10_000,
  headersTimeout: 10_000,
  requestTimeout: 60_000,
  keepAliveTimeout: 5_000,
  maxHeaderSize: 16_384,
  maxUrlLength: 8_192,
} as const;
/**
 * The options about clients and connections: upstreamConnections, maxConnections,
 * headersTimeout, requestTimeout, keepAliveTimeout, maxHeaderSize and maxUrlLength.
 *
 * @useDeclaredType
 */
export type ServerOptionName = keyof typeof SERVER_DEFAULTS;
const SERVER_OPTION_NAMES = Object.keys(SERVER_DEFAULTS) as ServerOptionName[];

const OPTION_NAMES = [
  'upstream',
  'limits',
  'trustProxy',
  'ipv6Prefix',
  'timeoutMs',
  ...SERVER_OPTION_NAMES,
  'rateLimiter',
  'inflightCounter',
  ...UNSHARED_SKETCH_OPTION_NAMES,
];
/** A request let through: what it holds until it ends. */
class Held {
  readonly guards: InflightGuard[] = [];
  readonly limits: ProxyLimit[] = [];
  readonly keys: Key[] = [];
}

/** What a request with no inflight limit over it holds: nothing, shared. */
const NOTHING: Held = new Held();

/**
 * What a client connection may still do: go on, or have every request answered 503 (one past
 * the cap), or nothing more (its framing was refused: what follows on it is not trusted, and a
 * request already parsed from the same bytes is never forwarded).
 */
const OPEN = 0;
const OVER_CAP = 1;
const REFUSED = 2;
const STANDING = Symbol('hotcount.standing');
type Counted = Socket & { [STANDING]?: typeof OPEN | typeof OVER_CAP | typeof REFUSED };

/**
 * The limiting reverse proxy: `new LimitingProxy({ upstream, limits })`, then
 * `proxy.server.listen(port, host)`; `close()` to shut it down.
 */
export class LimitingProxy {
  /** The proxy's server, not yet listening: `server.listen(port, host)`. */
  readonly server: Server;
  /** Counts of what the proxy decided, and the latencies (for `metricsText`). */
  readonly traffic: Traffic;
  /** The limits, in the order of the options' `limits`. */
  readonly limits: readonly ProxyLimit[];
  /** The upstream's URL: http://HOST[:PORT]. */
  readonly upstreamUrl: string;
  /** How long the upstream may stay silent before a 504, milliseconds. */
  readonly timeoutMs: number;
  /** The options about clients and connections, as given or defaulted. */
  readonly serverOptions: Readonly<Record<ServerOptionName, number>>;
  /** When the proxy was made, epoch milliseconds. */
  readonly startedAt = Date.now();
  private readonly upstream: Upstream;
  private readonly pool: Pool;
  private readonly trusted: boolean;
  private readonly tunnels = new Set<Socket>();
  /** Whether every limit covers every path (then no request needs a filter of them). */
  private readonly everywhere: boolean;
  /** Whether some limit has a rate (then responses carry RateLimit fields). */
  private readonly rated: boolean;
  private connections = 0;
  private readonly owner: ExchangeOwner;

  /**
   * TypeError or RangeError naming the option (`upstream`, `limits[0].rate`, ...) for options
   * that are not valid, and for limits without distinct names.
   */
  constructor(options: ProxyOptions) {
    if (options === null || typeof options !== 'object') {
      throw typeError('options', 'an object with upstream', options);
    }
    checkOptionNames('options', options, OPTION_NAMES);
    const {
      upstream,
      limits = [],
      timeoutMs = 30_000,
      rateLimiter,
      inflightCounter,
      ...rest
    } = options;
    checkFunction('rateLimiter', rateLimiter);
    checkFunction('inflightCounter', inflightCounter);
    this.upstream = parseUpstream(upstream);
    this.upstreamUrl = `http://${this.upstream.host}`;
    this.timeoutMs = integerIn('timeoutMs', timeoutMs, 1, 2 ** 31 - 1);
    // The server options are the proxy's own; the rest (the sketches' shape, keys) go to limits.
    const server = {} as Record<ServerOptionName, number>;
    const shared: LimitShared & Partial<Record<ServerOptionName, number>> = { ...rest };
    for (const name of SERVER_OPTION_NAMES) {
      server[name] = integerIn(name, options[name] ?? SERVER_DEFAULTS[name], 1, 2 ** 31 - 1);
      delete shared[name];
    }
    if (server.headersTimeout > server.requestTimeout) {
      throw rangeError('headersTimeout', 'at most requestTimeout', server.headersTimeout);
    }
    this.serverOptions = server;
    if (!Array.isArray(limits)) throw typeError('limits', 'an array', limits);
    this.limits = limits.map(
      (limit, i) =>
        new ProxyLimit(
          limit,
          `limits[${i}]`,
          shared,
          limits.length === 1 ? 'proxy' : `limit-${i + 1}`,
          { rateLimiter, inflightCounter },
        ),
    );
    const names = new Set(this.limits.map((limit) => limit.name));
    if (names.size !== this.limits.length) throw new RangeError('limits must have distinct names');
    this.everywhere = this.limits.every((limit) => limit.prefix === '/');
    this.rated = this.limits.some((limit) => limit.rate !== null);
    this.trusted = (shared.trustProxy ?? 0) > 0;
    const traffic = new Traffic();
    this.traffic = traffic;
    this.pool = new Pool(this.upstreamUrl, {
      connections: server.upstreamConnections,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
    this.owner = {
      upstreamEnded(exchange, failure) {
        if (failure === 'aborted') return;
        traffic.upstream.observe(performance.now() - exchange.sentAt);
        if (failure !== null) traffic.upstreamErrors[failure]++;
      },
      responseClosed(exchange) {
        traffic.inflight--;
        traffic.total.observe(performance.now() - exchange.startedAt);
        release(exchange.held as Held);
      },
    };
    this.server = createServer(
      {
        headersTimeout: server.headersTimeout,
        requestTimeout: server.requestTimeout,
        keepAliveTimeout: server.keepAliveTimeout,
        maxHeaderSize: server.maxHeaderSize,
        // How often node:http looks for connections past headersTimeout or requestTimeout.
        connectionsCheckingInterval: Math.min(1000, server.headersTimeout),
      },
      (req, res) => this.handle(req, res),
    );
    this.server.keepAliveTimeout = server.keepAliveTimeout;
    this.server.on('connection', (socket: Counted) => this.connected(socket));
    this.server.on('upgrade', (req, socket, head) => this.upgrade(req, socket as Socket, head));
  }

  /** Counts a client connection; one past the cap is marked (its requests get 503). */
  private connected(socket: Counted): void {
    const cap = this.serverOptions.maxConnections;
    if (this.connections >= 2 * cap) {
      this.traffic.connectionsRefused++;
      socket.destroy();
      return;
    }
    this.connections++;
    socket[STANDING] = this.connections > cap ? OVER_CAP : OPEN;
    socket.once('close', () => this.connections--);
  }

  /**
   * Decides `req` under every limit that covers it: what it holds, or the refusal to send.
   * `own` (when given) gathers the RateLimit fields, flat.
   */
  private admit(req: IncomingMessage, own: string[] | null): Held | Refusal {
    const limits = this.limits;
    if (limits.length === 0) {
      this.traffic.record('allowed');
      return NOTHING;
    }
    const path = req.url ?? '/';
    const covering = this.everywhere ? limits : limits.filter((limit) => limit.covers(path));
    const keys: Key[] = [];
    for (const limit of covering) {
      const key = limit.key(req);
      keys.push(key);
      limit.hot.seen(key);
    }
    let held = NOTHING;
    for (let i = 0; i < covering.length; i++) {
      const limit = covering[i];
      if (limit.inflight === null) continue;
      const entered = limit.inflight.enterKey(req, keys[i]);
      if (!(entered instanceof InflightGuard)) {
        release(held);
        this.traffic.record('inflight_limited');
        return entered;
      }
      if (held === NOTHING) held = new Held();
      held.guards.push(entered);
      held.limits.push(limit);
      held.keys.push(keys[i]);
      limit.hot.entered(keys[i]);
    }
    for (let i = 0; i < covering.length; i++) {
      const rate = covering[i].rate;
      if (rate === null) continue;
      const decided = rate.decideKey(req, keys[i]);
      if (own !== null) {
        addMember(own, 'ratelimit-policy', decided.policy);
        addMember(own, 'ratelimit', decided.state);
      }
      if (decided.refusal !== null) {
        release(held);
        this.traffic.record('rate_limited');
        return decided.refusal;
      }
    }
    this.traffic.record('allowed');
    return held;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const startedAt = performance.now();
    const traffic = this.traffic;
    const socket = req.socket as Counted;
    const standing = socket[STANDING];
    if (standing === REFUSED) return; // the connection closes after its 400
    if (standing === OVER_CAP) {
      traffic.connectionsRefused++;
      closeWith(res, {
        status: 503,
        title: 'Service Unavailable',
        detail: `the proxy has its most connections open (${this.serverOptions.maxConnections})`,
        retryAfterS: 1,
      });
      return;
    }
    const url = req.url ?? '/';
    if (url.length > this.serverOptions.maxUrlLength) {
      traffic.rejected.url++;
      closeWith(res, {
        status: 414,
        title: 'URI Too Long',
        detail: `the request target is over ${this.serverOptions.maxUrlLength} characters`,
        retryAfterS: 1,
      });
      return;
    }
    const scan = requestFields(
      req.rawHeaders,
      req.socket.remoteAddress ?? '',
      this.upstream.host,
      this.trusted,
    );
    if (scan.fault !== null) {
      traffic.rejected.framing++;
      socket[STANDING] = REFUSED;
      closeWith(res, {
        status: 400,
        title: 'Bad Request',
        detail: `ambiguous framing: ${scan.fault}`,
        retryAfterS: 1,
      });
      return;
    }
    const own = this.rated ? [] : null;
    let held: Held | Refusal;
    try {
      held = this.admit(req, own);
    } catch (error) {
      fail(res, () => {}, error);
      return;
    }
    if (!(held instanceof Held)) {
      if (own !== null) for (let i = 0; i < own.length; i += 2) setField(res, own[i], own[i + 1]);
      refuse(res, held);
      return;
    }
    traffic.inflight++;
    const exchange = new Exchange(this.owner, req, res, startedAt, this.timeoutMs, held, own);
    exchange.send(this.pool, scan.fields, scan.body);
  }

  /** An upgrade (WebSocket): limits as for any request, then a tunnel to the upstream. */
  private upgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    let held: Held | Refusal;
    try {
      held = this.admit(req, null);
    } catch (error) {
      refuseRaw(socket, {
        status: 500,
        title: 'Internal Server Error',
        detail: `hotcount could not key this request: ${(error as Error).message}`,
        retryAfterS: 1,
      });
      return;
    }
    if (!(held instanceof Held)) {
      refuseRaw(socket, held);
      return;
    }
    const admitted = held;
    const traffic = this.traffic;
    traffic.inflight++;
    this.tunnels.add(socket);
    socket.once('close', () => {
      traffic.inflight--;
      release(admitted);
      this.tunnels.delete(socket);
    });
    const outgoing = request({
      hostname: this.upstream.hostname,
      port: this.upstream.port,
      method: req.method,
      path: req.url,
      headers: upgradeFields(
        req.rawHeaders,
        req.socket.remoteAddress ?? '',
        this.upstream.host,
        this.trusted,
      ),
      agent: false,
    });
    outgoing.setTimeout(this.timeoutMs, () => {
      outgoing.destroy(Object.assign(new Error('upstream timeout'), { code: TIMED_OUT }));
    });
    outgoing.on('error', (error) => {
      const { timeout, refusal } = upstreamFailure(error, this.timeoutMs);
      traffic.upstreamErrors[timeout ? 'timeout' : 'refused']++;
      refuseRaw(socket, refusal);
    });
    outgoing.on('upgrade', (answer, tunnel, upstreamHead) => {
      outgoing.setTimeout(0);
      socket.write(statusLine(answer) + rawHeaders(answer.rawHeaders));
      if (upstreamHead.length > 0) socket.write(upstreamHead);
      if (head.length > 0) tunnel.write(head);
      tunnel.on('error', () => socket.destroy());
      socket.on('close', () => tunnel.destroy());
      tunnel.on('close', () => socket.destroy());
      tunnel.pipe(socket);
      socket.pipe(tunnel);
    });
    // The upstream declined the upgrade: its answer goes back as is, and the connection ends.
    outgoing.on('response', (answer) => {
      socket.write(statusLine(answer) + rawHeaders(answer.rawHeaders, true));
      answer.pipe(socket);
    });
    outgoing.end();
  }

  /**
   * Stops accepting; requests in progress (and open tunnels) have until `graceMs` to finish,
   * then what is left is cut. Resolves when the server is closed.
   */
  async close(graceMs = 10_000): Promise<void> {
    const server = this.server;
    const closed = once(server, 'close');
    server.close();
    server.closeIdleConnections();
    const deadline = setTimeout(() => {
      server.closeAllConnections();
      for (const socket of this.tunnels) socket.destroy();
    }, graceMs);
    // Keep-alive connections close as their responses end (Node answers with Connection: close
    // once the server is closing); the idle ones are closed now, and again as they turn idle.
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    try {
      await closed;
    } finally {
      clearTimeout(deadline);
      clearInterval(idle);
      await this.pool.destroy();
    }
  }

  /** Bytes of every limit's sketches, and the status page's. */
  get memoryBytes(): {
    /** Bytes of every limit's sketches. */
    limits: number;
    /** Bytes of the status page's sketches: each limit's hot keys, and the latencies. */
    status: number;
  } {
    let limits = 0;
    let status = this.traffic.total.memoryBytes + this.traffic.upstream.memoryBytes;
    for (const limit of this.limits) {
      limits += limit.memoryBytes;
      status += limit.hot.memoryBytes;
    }
    return { limits, status };
  }
}

/** A refusal after which the connection closes: what came after the request is not trusted. */
function closeWith(res: ServerResponse, refusal: Refusal): void {
  res.setHeader('Connection', 'close');
  refuse(res, refusal);
}

function release(held: Held): void {
  for (let i = 0; i < held.guards.length; i++) {
    const guard = held.guards[i];
    if (!guard.held) continue;
    guard.release();
    held.limits[i].hot.left(held.keys[i]);
  }
}

function parseUpstream(value: unknown): Upstream {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw rangeError('upstream', 'a URL such as http://127.0.0.1:8080', value);
  }
  if (typeof value !== 'string' && !(value instanceof URL)) {
    throw typeError('upstream', 'a URL such as http://127.0.0.1:8080', value);
  }
  if (
    url.protocol !== 'http:' ||
    url.pathname !== '/' ||
    url.search !== '' ||
    url.username !== ''
  ) {
    throw rangeError('upstream', 'http://HOST[:PORT] (no path, query or credentials)', value);
  }
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return { protocol: 'http:', hostname, port: Number(url.port || 80), host: url.host };
}

function statusLine(answer: IncomingMessage): string {
  return `HTTP/1.1 ${answer.statusCode} ${answer.statusMessage ?? ''}\r\n`;
}

/** Raw header lines as received, and the blank line; `close` adds Connection: close. */
function rawHeaders(raw: string[], close = false): string {
  let out = '';
  for (let i = 0; i < raw.length; i += 2) {
    if (close && /^(connection|keep-alive)$/i.test(raw[i])) continue;
    out += `${raw[i]}: ${raw[i + 1]}\r\n`;
  }
  return `${out}${close ? 'Connection: close\r\n' : ''}\r\n`;
}

/** A refusal written on a raw socket (an upgrade has no ServerResponse), then the end. */
function refuseRaw(socket: Socket, refusal: Refusal): void {
  if (socket.destroyed) return;
  const body = problemBody(refusal);
  socket.end(
    `HTTP/1.1 ${refusal.status} ${refusal.title}\r\n` +
      `Retry-After: ${refusal.retryAfterS}\r\n` +
      'Content-Type: application/problem+json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}
