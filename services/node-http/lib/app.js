'use strict';

// The request handler: routing, the handlers' answers written as JSON,
// metrics and the optional request log.

const { performance } = require('node:perf_hooks');
const { Router } = require('./router');
const { HttpError, NoAnswer } = require('./http');
const { ping } = require('./db');
const { stringRoutes } = require('./workloads/string');
const { bankRoutes } = require('./workloads/bank');
const { usersRoutes } = require('./workloads/users');
const { skuRoutes } = require('./workloads/sku');

const JSON_TYPE = 'application/json';
const NOT_FOUND = '{"error":"no such path"}';

/**
 * createApp returns {handle, state}: handle(req, res) serves the contract;
 * state.closing, once set, makes every answer close its connection and
 * /health report 503.
 *
 * deps: pgPool and mysqlPool (null when not configured), metrics
 * ({observe, render}), requestLog (a pino logger or null) and errorLog (a
 * pino logger for the service's own failures).
 */
function createApp({ pgPool, mysqlPool, metrics, requestLog, errorLog }) {
  const state = { closing: false };
  const router = new Router();
  const routes = [...stringRoutes(), ...bankRoutes(pgPool, { errorLog, metrics }), ...usersRoutes(pgPool), ...skuRoutes(mysqlPool)];
  routes.push({ method: 'GET', pattern: '/health', handle: health });
  routes.push({ method: 'GET', pattern: '/metrics', handle: scrape });
  for (const route of routes) router.add(route);

  async function health() {
    if (state.closing) throw new HttpError(503, 'shutting down');
    const pings = [];
    if (pgPool) pings.push(ping(pgPool, 'postgres'));
    if (mysqlPool) pings.push(ping(mysqlPool, 'mysql'));
    try {
      await Promise.all(pings);
    } catch (err) {
      errorLog.warn({ error: err.message }, 'health: database ping failed');
      throw new HttpError(503, 'database unavailable'); // the driver's text only in the log
    }
    return { status: 200, body: '{"status":"ok"}' };
  }

  async function scrape() {
    const { contentType, body } = await metrics.render();
    return { status: 200, body, contentType };
  }

  function send(req, res, start, path, route, status, body, headers, contentType) {
    const head = { 'Content-Type': contentType || JSON_TYPE, 'Content-Length': Buffer.byteLength(body) };
    if (headers !== undefined) Object.assign(head, headers);
    if (state.closing) head.Connection = 'close';
    res.writeHead(status, head);
    res.end(body);
    const ms = performance.now() - start;
    metrics.observe(route, status, ms / 1000);
    if (requestLog !== null) requestLog.info({ method: req.method, path, status, duration_ms: Math.round(ms * 1000) / 1000 });
  }

  function sendError(req, res, start, path, route, err) {
    if (err instanceof NoAnswer) {
      res.destroy(); // no status line, no body: the client sees its connection closed
      return;
    }
    if (err instanceof HttpError) {
      send(req, res, start, path, route, err.status, JSON.stringify({ error: err.message }), err.headers);
      return;
    }
    errorLog.error({ err, method: req.method, path, route }, 'request failed');
    send(req, res, start, path, route, 500, '{"error":"internal error (a bug in the service; see its log)"}');
  }

  function handle(req, res) {
    const start = performance.now();
    const url = req.url;
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (req.headers.host === undefined && req.httpVersionMinor === 1) {
      // HTTP/1.1 requires Host (RFC 9112 3.2); answered here, not by Node's bare 400, to keep errors JSON.
      send(req, res, start, path, 'unmatched', 400, '{"error":"missing Host header (required in HTTP/1.1)"}');
      return;
    }
    const hit = router.match(req.method, path);
    if (hit === null) {
      send(req, res, start, path, 'unmatched', 404, NOT_FOUND);
      return;
    }
    if (hit.route === undefined) {
      const body = JSON.stringify({ error: `method ${req.method} not allowed; use ${hit.allow}` });
      send(req, res, start, path, hit.pattern, 405, body, { Allow: hit.allow });
      return;
    }
    const route = hit.route.pattern;
    hit.route
      .handle(req, hit.params)
      .then(
        (r) => send(req, res, start, path, route, r.status, r.body, r.headers, r.contentType),
        (err) => sendError(req, res, start, path, route, err),
      )
      .catch((err) => {
        // send itself failed: a bug; never leave the client waiting.
        errorLog.error({ err, method: req.method, path, route }, 'writing the response failed');
        res.destroy();
      });
  }

  return { handle, state };
}

module.exports = { createApp };
