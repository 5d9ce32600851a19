/**
 * What one per-trace header costs HTTP/2 by itself, at each end: requests over Node's http2 (what
 * grpc-js runs on) from 8 client sessions to a server process, with no `traceparent`, with the same
 * one on every request, and with a fresh one per round of 8 requests (one per session, as a fan-out's
 * 8 branches each carry their trace's header to a different peer). Side by side in one run,
 * interleaved rounds, medians.
 *
 * A fresh value cannot be sent as an index into HPACK's dynamic table: it is encoded as a literal,
 * inserted into the table at both ends (evicting older entries) and decoded into a new string on the
 * server. The fixed value is indexed after its first request. The difference is the floor under
 * propagating W3C trace context per fan-out, whatever the tracing library does.
 *
 *   npm run bench -- trace-header
 */
import { spawn } from "node:child_process";
import http2 from "node:http2";
import { fileURLToPath, pathToFileURL } from "node:url";
import { recordFigures } from "./report.js";

const SESSIONS = 8;
const IN_FLIGHT = 8;
const ROUNDS = 10;
const WARMUP_ROUNDS = 3;
const ROUND_MS = 1_000;
const MODES = ["none", "fixed", "fresh"] as const;
type Mode = (typeof MODES)[number];

/** The child: an HTTP/2 server answering every stream; prints `PORT <n>`, and `CPU <µs>` per stdin line. */
function serve(): void {
  const server = http2.createServer();
  server.on("stream", (stream, headers) => {
    void headers["traceparent"];
    stream.respond({ ":status": 200 });
    stream.end("ok");
  });
  server.listen(0, "127.0.0.1", () => {
    const address = server.address();
    process.stdout.write(`PORT ${typeof address === "object" && address !== null ? address.port : 0}\n`);
  });
  process.stdin.on("data", () => {
    const u = process.cpuUsage();
    process.stdout.write(`CPU ${u.user + u.system}\n`);
  });
  process.stdin.on("end", () => server.close(() => process.exit(0)));
}

const hex = (n: number): string => {
  let s = "";
  for (let i = 0; i < n; i++) s += ((Math.random() * 16) | 0).toString(16);
  return s;
};

function request(session: http2.ClientHttp2Session, traceparent: string | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const headers: http2.OutgoingHttpHeaders = {
      ":method": "POST",
      ":path": "/tailswarm.v1.Swarm/Branch",
      "content-type": "application/grpc",
      te: "trailers",
    };
    if (traceparent !== undefined) headers["traceparent"] = traceparent;
    const stream = session.request(headers);
    stream.on("data", () => undefined);
    stream.on("end", () => resolve());
    stream.on("error", reject);
    stream.end("payload");
  });
}

export async function run(): Promise<void> {
  const script = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, ["--import", "tsx", script, "serve"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  let out = "";
  const waiters: ((v: number) => void)[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      let m: RegExpExecArray | null;
      while ((m = /(PORT|CPU) (\d+)\n/.exec(out)) !== null) {
        out = out.slice(m.index + m[0].length);
        if (m[1] === "PORT") resolve(Number(m[2]));
        else waiters.shift()?.(Number(m[2]));
      }
    });
    child.on("exit", (code) => reject(new Error(`trace-header server exited with ${code}`)));
  });
  const serverCpu = (): Promise<number> =>
    new Promise((resolve) => {
      waiters.push(resolve);
      child.stdin.write("cpu\n");
    });
  const sessions = Array.from({ length: SESSIONS }, () => http2.connect(`http://127.0.0.1:${port}`));
  const fixed = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00";
  /** Rounds of 8 requests (one per session) for `ms`, IN_FLIGHT rounds at once; returns requests sent. */
  const loop = async (mode: Mode, ms: number): Promise<number> => {
    const end = performance.now() + ms;
    let n = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (performance.now() < end) {
          const tp = mode === "none" ? undefined : mode === "fixed" ? fixed : `00-${hex(32)}-${hex(16)}-00`;
          await Promise.all(sessions.map((s) => request(s, tp)));
          n += SESSIONS;
        }
      }),
    );
    return n;
  };
  const client: Record<Mode, number[]> = { none: [], fixed: [], fresh: [] };
  const server: Record<Mode, number[]> = { none: [], fixed: [], fresh: [] };
  try {
    for (let r = 0; r < WARMUP_ROUNDS; r++) for (const m of MODES) await loop(m, ROUND_MS);
    for (let r = 0; r < ROUNDS; r++) {
      // rotate the order so that no mode always follows the same one
      for (let i = 0; i < MODES.length; i++) {
        const mode = MODES[(i + r) % MODES.length]!;
        const s0 = await serverCpu();
        const c0 = process.cpuUsage();
        const n = await loop(mode, ROUND_MS);
        const c1 = process.cpuUsage(c0);
        const s1 = await serverCpu();
        client[mode].push((c1.user + c1.system) / n);
        server[mode].push((s1 - s0) / n);
      }
    }
  } finally {
    for (const s of sessions) s.close();
    child.stdin.end();
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const note = `${SESSIONS} sessions, ${IN_FLIGHT} rounds of ${SESSIONS} requests in flight, median of ${ROUNDS} interleaved 1 s rounds`;
  recordFigures("trace-header", {
    "client CPU per request, no traceparent": { value: median(client.none), unit: "µs", note },
    "client CPU per request, the same traceparent every time": { value: median(client.fixed), unit: "µs" },
    "client CPU per request, a fresh traceparent per fan-out": { value: median(client.fresh), unit: "µs" },
    "server CPU per request, no traceparent": { value: median(server.none), unit: "µs" },
    "server CPU per request, the same traceparent every time": { value: median(server.fixed), unit: "µs" },
    "server CPU per request, a fresh traceparent per fan-out": { value: median(server.fresh), unit: "µs" },
    "a fresh traceparent's cost per request, both ends": {
      value: median(client.fresh) + median(server.fresh) - median(client.none) - median(server.none),
      unit: "µs",
      note: "×8 per 8-branch fan-out",
    },
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  if (process.argv[2] === "serve") serve();
  else await run();
}
