'use strict';

// Prometheus metrics through prom-client's default registry. In cluster
// mode each worker counts its own requests and GET /metrics, whichever
// worker serves it, answers the sum over all workers: the worker asks the
// primary, whose AggregatorRegistry collects every worker's registry over
// IPC (serveClusterMetrics, run by the primary in cluster.js).

const promClient = require('prom-client');
const { HttpError } = require('./http');

/** METRICS_REQUEST and METRICS_RESPONSE are the IPC message types of a cluster-wide scrape. */
const METRICS_REQUEST = 'showdown:metrics:request';
const METRICS_RESPONSE = 'showdown:metrics:response';

/**
 * SCRAPE_TIMEOUT_MS bounds a worker's wait for the primary's aggregated
 * metrics; longer than prom-client's own 5 s wait for a silent worker, so
 * that error, not this one, names the cause.
 */
const SCRAPE_TIMEOUT_MS = 6000;

/**
 * createMetrics registers the contract's metrics (and prom-client's
 * default process metrics) and returns {observe, render, commitResolved}. clustered makes
 * render aggregate over the cluster's workers.
 */
function createMetrics({ clustered }) {
  const registry = promClient.register;
  promClient.collectDefaultMetrics({ register: registry });
  const requests = new promClient.Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by route pattern and status code.',
    labelNames: ['route', 'status'],
    registers: [registry],
  });
  const duration = new promClient.Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by route pattern, from routing to the last byte handed to the socket.',
    labelNames: ['route'],
    registers: [registry],
  });

  const resolved = new promClient.Counter({
    name: 'bank_commit_resolved_total',
    help: 'Transfers whose COMMIT failed, by the outcome the service then found.',
    labelNames: ['outcome'],
    registers: [registry],
  });

  // Constructing an AggregatorRegistry in a worker is what makes prom-client
  // answer the primary's requests for this worker's metrics.
  if (clustered) new promClient.AggregatorRegistry(); // eslint-disable-line no-new

  function observe(route, status, seconds) {
    requests.inc({ route, status });
    duration.observe({ route }, seconds);
  }

  async function render() {
    if (!clustered) return { contentType: registry.contentType, body: await registry.metrics() };
    return { contentType: registry.contentType, body: await askPrimary() };
  }

  /** commitResolved counts one in-doubt COMMIT by its outcome. */
  function commitResolved(outcome) {
    resolved.inc({ outcome });
  }

  return { observe, render, commitResolved };
}

let nextScrape = 0;
let listening = false;
const pending = new Map(); // scrape id -> {resolve, reject, timer}

function askPrimary() {
  if (!listening) {
    listening = true;
    process.on('message', (msg) => {
      if (!msg || msg.type !== METRICS_RESPONSE) return;
      const p = pending.get(msg.id);
      if (!p) return;
      pending.delete(msg.id);
      clearTimeout(p.timer);
      if (msg.error) p.reject(new HttpError(503, `aggregating the workers' metrics: ${msg.error}`));
      else p.resolve(msg.body);
    });
  }
  return new Promise((resolve, reject) => {
    const id = ++nextScrape;
    const timer = setTimeout(() => {
      pending.delete(id);
      reject(new HttpError(503, `no aggregated metrics from the cluster primary within ${SCRAPE_TIMEOUT_MS} ms`));
    }, SCRAPE_TIMEOUT_MS);
    pending.set(id, { resolve, reject, timer });
    process.send({ type: METRICS_REQUEST, id });
  });
}

/**
 * serveClusterMetrics makes the primary answer its workers' scrape requests
 * with the sum of every worker's registry.
 */
function serveClusterMetrics(cluster) {
  const aggregator = new promClient.AggregatorRegistry();
  cluster.on('message', (worker, msg) => {
    if (!msg || msg.type !== METRICS_REQUEST) return;
    aggregator.clusterMetrics().then(
      (body) => worker.isConnected() && worker.send({ type: METRICS_RESPONSE, id: msg.id, body }),
      (err) => worker.isConnected() && worker.send({ type: METRICS_RESPONSE, id: msg.id, error: err.message }),
    );
  });
}

module.exports = { createMetrics, serveClusterMetrics };
