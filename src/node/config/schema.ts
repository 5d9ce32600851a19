/**
 * The node config, one schema: every key's type, range, default and doc line. The loader (file < env
 * < flags), the types (`NodeConfig`), `tailswarm node --help`, the JSON Schema (schema/node.schema.json,
 * `tailswarm config schema`) and the key table of docs/configuration.md are all derived from it, so a
 * new key is one entry here. Defaults and ranges of library options are the library's constants.
 * Env names are `TAILSWARM_` + the dotted path in SCREAMING_SNAKE (`probe.intervalMs` →
 * `TAILSWARM_PROBE_INTERVAL_MS`); flags are the path in kebab case (`--probe-interval-ms`).
 */
import { hostname } from "node:os";
import { nanoid } from "nanoid";
import { z } from "zod";
import { ABANDON_LEDGER_DEFAULTS, ABANDON_LEDGER_RANGES } from "../../engine/abandon-ledger.js";
import { HORIZON_PROBE_DEFAULTS, HORIZON_PROBE_RANGES } from "../../engine/horizon-probes.js";
import { HEDGE_DEFAULTS, HEDGE_RANGES } from "../../hedge/options.js";
import { HEDGE_POLICY_NAMES } from "../../hedge/types.js";
import type { HedgePolicyName } from "../../hedge/types.js";
import { ACTIVE_IDLE_WINDOWS, LATENCY_BOOK_DEFAULTS, LATENCY_BOOK_RANGES } from "../../estimate/options.js";
import { HEALTH_DEFAULTS, HEALTH_RANGES } from "../../mesh/membership/health.js";
import { MEMBERSHIP_DEFAULTS, MEMBERSHIP_RANGES } from "../../mesh/membership/membership.js";
import { SUSPECT_BACKOFF_DEFAULTS, SUSPECT_BACKOFF_RANGES } from "../../mesh/membership/suspect-backoff.js";
import { ADMISSION_DEFAULTS, ADMISSION_RANGES } from "../../mesh/admission.js";
import { CONNECTION_DEFAULTS, CONNECTION_RANGES } from "../../mesh/connection-limits.js";
import { SERVER_DEFAULTS, SERVER_RANGES } from "../../mesh/server-limits.js";
import { DEFAULT_POLICY, POLICY_NAMES } from "../../policy/types.js";
import type { PolicyName } from "../../policy/types.js";
import { PEER_VIEW_BOOK_DEFAULTS, PEER_VIEW_BOOK_RANGES } from "../../routing/peer-view-book.js";
import { ROUTER_DEFAULTS, ROUTER_RANGES, ROUTING_POLICIES } from "../../routing/router.js";
import type { RoutingPolicyName } from "../../routing/types.js";
import { DEFAULT_TRACES_PER_SECOND, TRACES_PER_SECOND_RANGE } from "../../telemetry/sampler-defaults.js";
import { intRange } from "../../util/range.js";
import {
  boolField,
  group,
  hostPortField,
  listField,
  oneOfField,
  rangeField,
  shownDefault,
  textField,
} from "./fields.js";
import { handlersField } from "./handlers-field.js";
import { leavesOf } from "./leaves.js";
import type { ConfigLeaf } from "./leaves.js";
import { primitivesField } from "./primitives-field.js";

const ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const idText = "1-128 characters: letters, digits, . _ : - (starting with a letter or digit)";

function defaultNodeId(): string {
  const host =
    hostname()
      .replace(/[^A-Za-z0-9._-]/g, "-")
      .slice(0, 100) || "node";
  return `${host}-${nanoid(6).replace(/[^A-Za-z0-9]/g, "x")}`;
}

const doc = (description: string) => ({ description });

const estimator = LATENCY_BOOK_RANGES;
const server = SERVER_RANGES;
const conn = CONNECTION_RANGES;

export const nodeConfigSchema = z.strictObject({
  nodeId: shownDefault(textField(idText, ID), "hostname-random6", true)
    .default(defaultNodeId)
    .meta(doc("Node identity, unique in the swarm (default: hostname-random).")),
  region: textField(idText, ID).default("default").meta(doc("Region label; peers learn it through State.")),
  listen: hostPortField(true)
    .default("127.0.0.1:7400")
    .meta(doc("Address of the one gRPC port; port 0 picks a free port.")),
  peers: listField(hostPortField(false)).default([]).meta(doc("Static seed peers (host:port).")),
  dns: listField(hostPortField(false))
    .default([])
    .meta(doc("DNS names (host:port); each A/AAAA record is a peer (headless service).")),
  dnsIntervalMs: rangeField(MEMBERSHIP_RANGES.refreshMs)
    .default(MEMBERSHIP_DEFAULTS.refreshMs)
    .meta(doc("How often DNS names are re-resolved, ms.")),
  fanoutRegions: listField(textField(idText, ID), "a list of region names (comma-separated in env and flags)")
    .default([])
    .meta(
      doc(
        "Regions whose peers this node's fan-outs may go to (peers tell their region through State); empty: every region. While set, a peer whose region is not known yet gets no branch.",
      ),
    ),
  probe: group({
    intervalMs: rangeField(MEMBERSHIP_RANGES.probeIntervalMs)
      .default(MEMBERSHIP_DEFAULTS.probeIntervalMs)
      .meta(doc("Probe period per peer, ms (each round jittered ±20%, so nodes do not probe in lockstep).")),
    timeoutMs: rangeField(MEMBERSHIP_RANGES.probeTimeoutMs)
      .default(MEMBERSHIP_DEFAULTS.probeTimeoutMs)
      .meta(doc("Deadline of one probe, ms.")),
    failureThreshold: rangeField(MEMBERSHIP_RANGES.failureThreshold)
      .default(MEMBERSHIP_DEFAULTS.failureThreshold)
      .meta(doc("Consecutive failed probes that mark a peer down.")),
    backoffMaxMs: rangeField(MEMBERSHIP_RANGES.probeBackoffMaxMs)
      .default(MEMBERSHIP_DEFAULTS.probeBackoffMaxMs)
      .meta(
        doc(
          "Longest wait between probes of an address that does not answer (not identified yet, or down), ms: from intervalMs, doubled per unanswered probe, jittered ±20%.",
        ),
      ),
    suspectBackoffMaxMs: rangeField(SUSPECT_BACKOFF_RANGES.backoffMaxMs)
      .default(SUSPECT_BACKOFF_DEFAULTS.backoffMaxMs)
      .meta(
        doc(
          "Longest wait between probes of an idle (no branch outcome for the estimator window) or suspected (its last branch failed, or ejected) active-set peer, ms: a suspected one probed at its first bad branch; then from intervalMs, doubled per probe, jittered ±20%; branch outcomes still eject it.",
        ),
      ),
  }),
  membership: group({
    subsetSize: rangeField(MEMBERSHIP_RANGES.subsetSize)
      .default(MEMBERSHIP_DEFAULTS.subsetSize)
      .meta(
        doc(
          "Addresses a node identifies, keeps channels to and fans out to beyond its active set: a rendezvous-hashed subset, different per node (docs/scaling.md says which of them are probed).",
        ),
      ),
    channelIdleMs: rangeField(MEMBERSHIP_RANGES.channelIdleMs)
      .default(MEMBERSHIP_DEFAULTS.channelIdleMs)
      .meta(doc("A channel to a peer unused this long is closed, ms.")),
  }),
  health: group({
    failureThreshold: rangeField(HEALTH_RANGES.failureThreshold)
      .default(HEALTH_DEFAULTS.failureThreshold)
      .meta(doc("Consecutive failed, rejected or outlier branches that eject a peer from fan-outs.")),
    outlierFactor: rangeField(HEALTH_RANGES.outlierFactor)
      .default(HEALTH_DEFAULTS.outlierFactor)
      .meta(
        doc("A branch slower than this times the peer's own p99, or the peers' median p99, is an outlier."),
      ),
    maxEjectedPercent: rangeField(HEALTH_RANGES.maxEjectedPercent)
      .default(HEALTH_DEFAULTS.maxEjectedPercent)
      .meta(
        doc(
          "Peers ejected at once at most, percent of those seen (at least one); past it ejections are refused (logged).",
        ),
      ),
    baseEjectionMs: rangeField(HEALTH_RANGES.baseEjectionMs)
      .default(HEALTH_DEFAULTS.baseEjectionMs)
      .meta(doc("First ejection of a peer, ms; each further one doubles it.")),
    maxEjectionMs: rangeField(HEALTH_RANGES.maxEjectionMs)
      .default(HEALTH_DEFAULTS.maxEjectionMs)
      .meta(doc("Longest ejection, ms.")),
  }),
  handlers: shownDefault(handlersField, "echo, vote")
    .default([
      { kind: "echo", use: "echo" },
      { kind: "vote", use: "vote" },
    ])
    .meta(doc("Task kinds served and what serves them (see peers/README.md).")),
  concurrency: rangeField(server.concurrency)
    .default(SERVER_DEFAULTS.concurrency)
    .meta(doc("Handler executions running at once.")),
  queueLimit: rangeField(server.maxQueue)
    .default(SERVER_DEFAULTS.maxQueue)
    .meta(doc("Branches waiting beyond `concurrency`; more are refused (RESOURCE_EXHAUSTED).")),
  coordinate: group({
    maxConcurrent: rangeField(ADMISSION_RANGES.maxConcurrent)
      .default(ADMISSION_DEFAULTS.maxConcurrent)
      .meta(doc("Coordinate calls (fan-outs) running at once.")),
    maxQueue: rangeField(ADMISSION_RANGES.maxQueue)
      .default(ADMISSION_DEFAULTS.maxQueue)
      .meta(
        doc(
          "Coordinate calls waiting beyond coordinate.maxConcurrent (a bound on memory); more, or one whose predicted wait plus mean service time is past its deadline, are refused at once (RESOURCE_EXHAUSTED with grpc-retry-pushback-ms; logged).",
        ),
      ),
    shedHoldMs: rangeField(ADMISSION_RANGES.shedHoldMs)
      .default(ADMISSION_DEFAULTS.shedHoldMs)
      .meta(
        doc("Health reads NOT_SERVING from a refused Coordinate until this long after the last one, ms."),
      ),
  }),
  maxPayloadBytes: rangeField(server.maxPayloadBytes)
    .default(SERVER_DEFAULTS.maxPayloadBytes)
    .meta(doc("Largest task payload or answer, bytes (JSON).")),
  maxJsonDepth: rangeField(server.maxJsonDepth)
    .default(SERVER_DEFAULTS.maxJsonDepth)
    .meta(
      doc(
        "Deepest nesting of arrays and objects in a JSON payload, options or a peer's answer; deeper is INVALID_ARGUMENT.",
      ),
    ),
  maxDeadlineMs: rangeField(server.maxDeadlineMs)
    .default(SERVER_DEFAULTS.maxDeadlineMs)
    .meta(
      doc(
        "Longest deadline honoured (gRPC timeout, deadline_unix_ms, budget_ms); a later one is cut to it, ms.",
      ),
    ),
  deadlineReserveMs: rangeField(server.deadlineReserveMs)
    .default(SERVER_DEFAULTS.deadlineReserveMs)
    .meta(
      doc(
        "Kept back from an incoming deadline to reply in time, ms: a Branch's reserve; a Coordinate keeps it for the transit it cannot see (before the request is read, after the reply is written) on top of its measured decide-and-reply overhead p99 and its event loop's lateness (its delay p99, or the stall the request's read met if larger).",
      ),
    ),
  replyReserveMinMs: rangeField(server.replyReserveMinMs)
    .default(SERVER_DEFAULTS.replyReserveMinMs)
    .meta(
      doc(
        "Smallest reserve a Coordinate keeps (deadlineReserveMs plus its measured decide-and-reply overhead p99 plus its event loop's lateness is raised to this), ms.",
      ),
    ),
  replyReserveMaxMs: rangeField(server.replyReserveMaxMs)
    .default(SERVER_DEFAULTS.replyReserveMaxMs)
    .meta(
      doc(
        "Largest reserve a Coordinate keeps while the node is not saturated (deadlineReserveMs plus its measured decide-and-reply overhead p99 plus its event loop's lateness is capped at this; reaching it is logged); while admission sheds or every slot is taken only replyReserveMaxShare caps it, ms.",
      ),
    ),
  replyReserveMaxShare: rangeField(server.replyReserveMaxShare)
    .default(SERVER_DEFAULTS.replyReserveMaxShare)
    .meta(
      doc(
        "Largest share, in [0, 1], of a Coordinate's time left on arrival its reserve may take (the rest stays for the fan-out or the degrade; reaching it is logged).",
      ),
    ),
  defaultBudgetMs: rangeField(server.defaultBudgetMs)
    .default(SERVER_DEFAULTS.defaultBudgetMs)
    .meta(doc("Budget of a call (Coordinate or Branch) with no deadline and no budget_ms, ms.")),
  estimator: group({
    windowMs: rangeField(estimator.windowMs)
      .default(LATENCY_BOOK_DEFAULTS.windowMs)
      .meta(doc("Latency window per peer, ms (shorter than the tail's correlation time).")),
    slices: rangeField(estimator.slices)
      .default(LATENCY_BOOK_DEFAULTS.slices)
      .meta(
        doc(
          "Sub-windows in the ring; staleness <= windowMs * (1 + 1/slices), × windowMaxStretch while a peer holds fewer than windowMinCompletions answers.",
        ),
      ),
    minSamples: rangeField(estimator.minSamples)
      .default(LATENCY_BOOK_DEFAULTS.minSamples)
      .meta(doc("Fewer samples in the window makes an estimate unknown.")),
    observedFanoutSets: rangeField(estimator.observedFanoutSets)
      .default(LATENCY_BOOK_DEFAULTS.observedFanoutSets)
      .meta(
        doc(
          "Required peer sets whose own fan-out completion times are observed (they see correlated tails); 0 turns this off.",
        ),
      ),
    observedMinSamples: rangeField(estimator.observedMinSamples)
      .default(LATENCY_BOOK_DEFAULTS.observedMinSamples)
      .meta(
        doc("Fan-outs to a set in the window before its observed completion times give the fan-out p50."),
      ),
    maxSamplesPerPeer: rangeField(estimator.maxSamplesPerPeer)
      .default(LATENCY_BOOK_DEFAULTS.maxSamplesPerPeer)
      .meta(
        doc(
          "Completed samples (and, apart, censored ends) a peer's window holds; the oldest are dropped past it (2 bytes each).",
        ),
      ),
    maxInFlightPerPeer: rangeField(estimator.maxInFlightPerPeer)
      .default(LATENCY_BOOK_DEFAULTS.maxInFlightPerPeer)
      .meta(
        doc(
          "Calls in flight to one peer whose start the estimator keeps (each counts as censored at its age; about 60 bytes each, so a peer holds at most 16 KiB at the default); calls past it count as censored at the youngest one's age, a lower bound of each (logged). Not horizonProbe.maxInFlightPerPeer (probes).",
        ),
      ),
    windowMinCompletions: rangeField(estimator.windowMinCompletions)
      .default(LATENCY_BOOK_DEFAULTS.windowMinCompletions)
      .meta(
        doc(
          "While a peer's window (or an observed fan-out set's) holds fewer completed samples than this, it keeps older slices (newest first) until it does, up to windowMaxStretch windows back: a p99 needs 100, and a slow answer seen once then counts as one in up to windowMaxStretch windows' answers (at most windowMinCompletions) instead of vanishing after windowMs; 0 turns it off.",
        ),
      ),
    windowMaxStretch: rangeField(estimator.windowMaxStretch)
      .default(LATENCY_BOOK_DEFAULTS.windowMaxStretch)
      .meta(
        doc(
          "How far back, in windows, a peer's window may reach for windowMinCompletions (1: never past windowMs); slices × windowMaxStretch <= 192. Each window of stretch adds slices × 4 bytes per peer and per observed fan-out set (a 2-byte count per slot in the samples and the ends ring): 48 bytes at the defaults (6 slices, 2 windows past windowMs), the rings at most 768 bytes (192 slots).",
        ),
      ),
  }),
  activeSet: group({
    idleMs: rangeField(estimator.activeIdleMs)
      .optional()
      .meta(
        doc(
          `A peer with no branch for this long leaves the active set and its estimates are dropped, ms (default: ${ACTIVE_IDLE_WINDOWS} x estimator.windowMs).`,
        ),
      ),
    maxPeers: rangeField(estimator.maxActivePeers)
      .default(LATENCY_BOOK_DEFAULTS.maxActivePeers)
      .meta(doc("Peers whose estimates are kept at most; past it the least recently used leaves (logged).")),
  }),
  policy: oneOfField(POLICY_NAMES as unknown as readonly [PolicyName, ...PolicyName[]])
    .default(DEFAULT_POLICY)
    .meta(doc("Default speculation policy.")),
  routing: group({
    policy: oneOfField(["none", ...ROUTING_POLICIES] as unknown as readonly ["none", ...RoutingPolicyName[]])
      .default("none")
      .meta(
        doc(
          "Which peers a fan-out goes to: none (every live peer) or a routing policy picking routing.k of them (mabp: memory-augmented backpressure; docs/routing.md).",
        ),
      ),
    k: rangeField(intRange(0, 100_000))
      .default(0)
      .meta(doc("Peers a routing policy picks per fan-out; 0 means all live peers.")),
    nu: rangeField(ROUTER_RANGES.nu)
      .default(ROUTER_DEFAULTS.nu)
      .meta(doc("Penalty weight ν of MABP and cost-BP.")),
    reservationTtlMs: rangeField(ROUTER_RANGES.reservationTtl)
      .default(ROUTER_DEFAULTS.reservationTtl)
      .meta(
        doc(
          "How long a routed branch counts in the peer's queue before its state says so, ms; 0 disables reservations.",
        ),
      ),
    staleMs: rangeField(PEER_VIEW_BOOK_RANGES.staleMs)
      .default(PEER_VIEW_BOOK_DEFAULTS.staleMs)
      .meta(
        doc("A peer's advertised routing state older than this loses its memory claims (and is polled), ms."),
      ),
    primitives: primitivesField
      .optional()
      .meta(
        doc(
          "Primitives w, p, P per queue key for mabp and cost-bp (config file only); given, the node uses them and learns nothing (docs/routing.md).",
        ),
      ),
  }),
  abandonCostPriorMs: rangeField(ABANDON_LEDGER_RANGES.priorMs)
    .default(ABANDON_LEDGER_DEFAULTS.priorMs)
    .meta(
      doc(
        `Abandon cost assumed while the ledger's window (estimator.windowMs and slices) holds fewer than ${ABANDON_LEDGER_DEFAULTS.minSamples} fan-outs that cut a branch, ms.`,
      ),
    ),
  horizonProbe: group({
    share: rangeField(HORIZON_PROBE_RANGES.share)
      .default(HORIZON_PROBE_DEFAULTS.share)
      .meta(
        doc(
          "Horizon probes per branch cut at its deadline, beyond those owed by horizonProbe.minPerPeerPerWindow: such a branch is left running on the peer and its late completion time learnt, so an estimate can see a tail beyond the budget. 0 turns probes off.",
        ),
      ),
    minPerPeerPerWindow: rangeField(HORIZON_PROBE_RANGES.minPerPeerPerWindow)
      .default(HORIZON_PROBE_DEFAULTS.minPerPeerPerWindow)
      .meta(
        doc(
          "Horizon probes a peer whose branches are cut at the deadline (and whose p99 is a lower bound) may start per estimator.windowMs whatever the share's credit; not from a stalled cut: most of a fan-out cut while the coordinator noticed its deadline late by more than a tenth of the budget (its own event loop was held, which says little of each peer's tail).",
        ),
      ),
    maxPerPeerPerWindow: rangeField(HORIZON_PROBE_RANGES.maxPerPeerPerWindow)
      .default(HORIZON_PROBE_DEFAULTS.maxPerPeerPerWindow)
      .meta(
        doc(
          "Horizon probes started per peer per estimator.windowMs, at most (refusals counted as capped; reaching it is logged).",
        ),
      ),
    maxPerWindow: rangeField(HORIZON_PROBE_RANGES.maxPerWindow)
      .default(HORIZON_PROBE_DEFAULTS.maxPerWindow)
      .meta(
        doc(
          "Horizon probes started per estimator.windowMs over all peers, at most (refusals counted as capped; reaching it is logged).",
        ),
      ),
    maxPerFanout: rangeField(HORIZON_PROBE_RANGES.maxPerFanout)
      .default(HORIZON_PROBE_DEFAULTS.maxPerFanout)
      .meta(
        doc(
          "Horizon probes started by one fan-out's cut, at most, even where more are owed by horizonProbe.minPerPeerPerWindow. A cut starts only those that place its observed fan-out past the cut (cut − still needed + 1: one for a fan-out that waits for every answer, as any one late answer bounds it), up to this, to its cut peers with the fewest probes this window (refusals by this cap counted as capped; reaching it is logged), so a burst of cuts leaves probes for its later fan-outs.",
        ),
      ),
    maxInFlightPerPeer: rangeField(HORIZON_PROBE_RANGES.maxInFlightPerPeer)
      .default(HORIZON_PROBE_DEFAULTS.maxInFlightPerPeer)
      .meta(
        doc(
          "Horizon probes of one peer running at once, at most; while a peer has them, its branches are not probe candidates (counted as busy; reaching it is logged): probes started in one slow stretch of a peer all end with it, so one at a time spreads the window's probes over distinct stretches.",
        ),
      ),
    maxMs: rangeField(HORIZON_PROBE_RANGES.maxMs)
      .default(HORIZON_PROBE_DEFAULTS.maxMs)
      .meta(
        doc(
          "A horizon probe's deadline on the peer, from its issue, ms: a probe that has not answered by then is censored at its age.",
        ),
      ),
  }),
  hedge: group({
    policy: oneOfField(HEDGE_POLICY_NAMES as unknown as readonly [HedgePolicyName, ...HedgePolicyName[]])
      .default("gated")
      .meta(
        doc(
          "Hedge policy of a replicated Coordinate (any k of r replicas) that names none: gated (a backup only when it can land within the remaining budget and is worth its cost), none, fixed-delay, percentile or p95.",
        ),
      ),
    delayMs: rangeField(HEDGE_RANGES.delayMs)
      .default(HEDGE_DEFAULTS.delayMs)
      .meta(doc("fixed-delay: a backup once the primary has been out this long, ms (gRPC A6 hedgingDelay).")),
    maxExtraLoad: rangeField(HEDGE_RANGES.maxExtraLoad)
      .default(HEDGE_DEFAULTS.maxExtraLoad)
      .meta(
        doc(
          "Extra-load ceiling of gated and percentile: backups per primary branch over any hedge.ceilingWindowMs (percentile also hedges at the 1 − this quantile); a refusal by it is logged.",
        ),
      ),
    ceilingWindowMs: rangeField(HEDGE_RANGES.ceilingWindowMs)
      .default(HEDGE_DEFAULTS.ceilingWindowMs)
      .meta(doc("The window over which hedge.maxExtraLoad holds, ms.")),
    minBackupsPerWindow: rangeField(HEDGE_RANGES.minBackupsPerWindow)
      .default(HEDGE_DEFAULTS.minBackupsPerWindow)
      .meta(doc("Backups any window admits beyond hedge.maxExtraLoad × its primaries.")),
    checkEveryMs: rangeField(HEDGE_RANGES.checkEveryMs)
      .default(HEDGE_DEFAULTS.checkEveryMs)
      .meta(doc("gated: how often an outstanding replica branch is re-examined for a backup, ms.")),
  }),
  maxAbandonBytes: rangeField(server.maxAbandonBytes)
    .default(SERVER_DEFAULTS.maxAbandonBytes)
    .meta(
      doc(
        "Bytes the ids of Abandons that arrived before their Branch may hold (they wait 30 s); the oldest are dropped first (logged).",
      ),
    ),
  connections: group({
    maxConnections: rangeField(conn.maxConnections)
      .default(CONNECTION_DEFAULTS.maxConnections)
      .meta(doc("Open client connections in all; more are closed on arrival (logged).")),
    maxConnectionsPerAddress: rangeField(conn.maxConnectionsPerAddress)
      .default(CONNECTION_DEFAULTS.maxConnectionsPerAddress)
      .meta(doc("Open connections from one remote address; more are closed on arrival (logged).")),
    maxConcurrentStreams: rangeField(conn.maxConcurrentStreams)
      .default(CONNECTION_DEFAULTS.maxConcurrentStreams)
      .meta(doc("Calls open at once on one connection (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS).")),
    handshakeTimeoutMs: rangeField(conn.handshakeTimeoutMs)
      .default(CONNECTION_DEFAULTS.handshakeTimeoutMs)
      .meta(
        doc("A connection that has not finished TLS and the HTTP/2 preface by then is closed (logged), ms."),
      ),
    idleTimeoutMs: rangeField(conn.idleTimeoutMs)
      .default(CONNECTION_DEFAULTS.idleTimeoutMs)
      .meta(doc("A connection with no call open for this long is closed (logged), ms.")),
    keepaliveTimeMs: rangeField(conn.keepaliveTimeMs)
      .default(CONNECTION_DEFAULTS.keepaliveTimeMs)
      .meta(doc("The node pings each client connection this often to find dead ones, ms.")),
    keepaliveTimeoutMs: rangeField(conn.keepaliveTimeoutMs)
      .default(CONNECTION_DEFAULTS.keepaliveTimeoutMs)
      .meta(doc("A ping unanswered this long closes the connection, ms.")),
    maxPingsPerKeepalive: rangeField(conn.maxPingsPerKeepalive)
      .default(CONNECTION_DEFAULTS.maxPingsPerKeepalive)
      .meta(
        doc("Pings a client may send per connections.keepaliveTimeMs; more close its connection (logged)."),
      ),
    maxPendingSendBytes: rangeField(conn.maxPendingSendBytes)
      .default(CONNECTION_DEFAULTS.maxPendingSendBytes)
      .meta(
        doc("Reply bytes waiting on one connection for a client that does not read; more close it (logged)."),
      ),
    sendStallTimeoutMs: rangeField(conn.sendStallTimeoutMs)
      .default(CONNECTION_DEFAULTS.sendStallTimeoutMs)
      .meta(
        doc("A connection whose waiting reply bytes have not shrunk for this long is closed (logged), ms."),
      ),
  }),
  drainGraceMs: rangeField(server.drainGraceMs)
    .default(SERVER_DEFAULTS.drainGraceMs)
    .meta(doc("On SIGTERM/SIGINT, time in-flight work gets to finish before it is cancelled, ms.")),
  tls: group({
    ca: textField("a file path")
      .optional()
      .meta(doc("PEM CA bundle; verifies peers' servers and, with requireClientCert, clients.")),
    cert: textField("a file path")
      .optional()
      .meta(doc("PEM certificate of this node (served, and presented to peers).")),
    key: textField("a file path").optional().meta(doc("PEM private key of tls.cert.")),
    requireClientCert: boolField()
      .default(false)
      .meta(doc("Mutual TLS: refuse callers without a certificate signed by tls.ca.")),
    serverName: textField("a DNS name")
      .optional()
      .meta(
        doc(
          "Name peers' certificates are checked against instead of the address dialed (under DNS discovery that is a pod IP); default: the address.",
        ),
      ),
    reloadIntervalMs: rangeField(intRange(0, 3_600_000))
      .default(30_000)
      .meta(
        doc(
          "How often the tls.* files are re-read; a changed, valid set serves new connections without a restart, an invalid one is refused (logged) and the old set kept. 0 turns reloading off, ms.",
        ),
      ),
  }),
  authorization: group({
    peers: listField(textField("an identity or pattern"))
      .default([])
      .meta(
        doc(
          "Identities (certificate SAN: spiffe://… or DNS name; * matches within one path segment or label) that may call Branch, Probe, State and Abandon. A non-empty authorization.* turns authorization on and needs tls.requireClientCert.",
        ),
      ),
    clients: listField(textField("an identity or pattern"))
      .default([])
      .meta(doc("Identities or patterns that may call Coordinate.")),
    operators: listField(textField("an identity or pattern"))
      .default([])
      .meta(doc("Identities or patterns that may call NodeStatus, Decisions and server reflection.")),
  }),
  metrics: group({
    prometheusPort: rangeField(intRange(0, 65_535))
      .default(0)
      .meta(doc("Prometheus scrape port on the listen host; 0 disables it.")),
  }),
  telemetry: group({
    contextManager: oneOfField(["async-hooks", "sync"])
      .default("async-hooks")
      .meta(
        doc(
          "How trace context follows async work: async-hooks (the SDK's AsyncLocalStorage manager, across every await; on Node 24 without async hooks) or sync (within synchronous calls only: tailswarm's own traces across hops need no more; handlers that await instrumented libraries leave the trace).",
        ),
      ),
    tracesPerSecond: rangeField(TRACES_PER_SECOND_RANGE)
      .default(DEFAULT_TRACES_PER_SECOND)
      .meta(
        doc(
          "New traces per second the default sampler starts (a call from a sampled caller is always traced; every trace below this rate). Ignored when OTEL_TRACES_SAMPLER is set; parentbased_always_on traces every fan-out (docs/telemetry.md).",
        ),
      ),
  }),
  logLevel: oneOfField(["debug", "info", "warn", "error", "silent"])
    .default("info")
    .meta(doc("Lowest level written to stderr.")),
});

/** Every node config key, in the order of the schema (the order of `--help` and the docs). */
export const configLeaves: readonly ConfigLeaf[] = leavesOf(nodeConfigSchema);

/** `probe.intervalMs` → `TAILSWARM_PROBE_INTERVAL_MS`. */
export function envName(path: string): string {
  return `TAILSWARM_${path
    .split(".")
    .map((p) => p.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase())
    .join("_")}`;
}

/** `probe.intervalMs` → `probe-interval-ms` (the flag without its dashes). */
export function flagName(path: string): string {
  return path
    .split(".")
    .map((p) => p.replace(/([a-z0-9])([A-Z])/g, "$1-$2").toLowerCase())
    .join("-");
}

/** Environment variables the node reads that are not config keys. */
export const extraEnv: Readonly<Record<string, string>> = {
  TAILSWARM_CONFIG: "Path of a JSON or YAML config file (same as --config).",
  TAILSWARM_TRACE:
    "Comma list of modules to trace at debug level (node, mesh, engine, membership, config; `all`).",
  TAILSWARM_V8_FLAGS:
    "V8 heap flags `tailswarm node` restarts itself with unless node was given them; empty: V8's defaults (docs/security.md, Overload).",
};
