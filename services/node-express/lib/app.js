'use strict';

// The Express application: routes, the JSON body parser, 404 and 405 in
// JSON, the error handler, metrics and the optional request log.

const express = require('express');
const { performance } = require('node:perf_hooks');
const { HttpError, NoAnswer, MAX_BODY } = require('./http');
const { ping, isUnavailable } = require('./db');
const { stringRoutes } = require('./workloads/string');
const { bankRoutes } = require('./workloads/bank');
const { usersRoutes } = require('./workloads/users');
const { skuRoutes } = require('./workloads/sku');

/** DOT_SEGMENT matches a path with a "." or ".." segment. */
const DOT_SEGMENT = /(^|\/)\.{1,2}(\/|$)/;

/**
 * createApp returns {app, state}: app is the Express application that
 * serves the contract; state.closing, once set, makes every answer close
 * its connection and /health report 503.
 *
 * deps: pgPool and mysqlPool (null when not configured), metrics
 * ({observe, render, commitResolved}), requestLog (a pino logger or null)
 * and errorLog (a pino logger for the service's own failures).
 */
function createApp({ pgPool, mysqlPool, metrics, requestLog, errorLog }) {
  const state = { closing: false };
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag'); // no conditional GETs in this API: a hash of every body for nothing
  // The contract's paths are exact: /health/ and /HEALTH are 404.
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  app.set('query parser', false); // no route reads a query string

  app.use(observe);

  // Every body is JSON, whatever its Content-Type (the contract checks
  // none); strict: an object or an array, else 400.
  const json = express.json({ limit: MAX_BODY, type: () => true, strict: true });
  const allowed = new Map(); // path pattern -> its methods, for 405's Allow
  function route(method, pattern, ...handlers) {
    app[method](pattern, ...handlers);
    const methods = allowed.get(pattern) || [];
    methods.push(method.toUpperCase());
    if (method === 'get') methods.push('HEAD'); // Express serves HEAD from GET routes
    allowed.set(pattern, methods);
  }
  stringRoutes(route, json);
  bankRoutes(route, json, pgPool, { errorLog, metrics });
  usersRoutes(route, json, pgPool);
  skuRoutes(route, mysqlPool);
  route('get', '/health', health);
  route('get', '/metrics', scrape);
  // A known path with another method: 405 with Allow. Registered after
  // every route, so that GET /client/new/x still reaches GET /client/:id/balance.
  for (const [pattern, methods] of allowed) {
    const allow = methods.sort().join(', ');
    app.all(pattern, (req) => {
      throw new HttpError(405, `method ${req.method} not allowed; use ${allow}`, { Allow: allow });
    });
  }
  app.use((req, res) => answer(res, 404, 'no such path'));
  app.use(errorHandler);

  // observe counts and times every request once its answer is written,
  // logs it when requestLog is set, asks the client to close once the
  // service is closing, and answers a path with a dot segment 404 (Express
  // would match /client/../balance to /client/:id/balance).
  function observe(req, res, next) {
    const start = performance.now();
    if (state.closing) res.setHeader('Connection', 'close');
    res.on('finish', () => {
      const seconds = (performance.now() - start) / 1000;
      const route = req.route ? routeLabel(req.route.path) : 'unmatched';
      metrics.observe(route, res.statusCode, seconds);
      if (requestLog !== null) {
        requestLog.info({
          method: req.method,
          path: pathOf(req.originalUrl),
          status: res.statusCode,
          duration_ms: Math.round(seconds * 1e6) / 1000,
        });
      }
    });
    if (DOT_SEGMENT.test(pathOf(req.url))) {
      answer(res, 404, 'no such path');
      return;
    }
    next();
  }

  async function health(req, res) {
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
    res.json({ status: 'ok' });
  }

  async function scrape(req, res) {
    const { contentType, body } = await metrics.render();
    res.type(contentType).send(body);
  }

  // errorHandler answers every failure in JSON: the contract's errors
  // (HttpError), the body parser's (malformed JSON 400, over 1 MiB 413,
  // each with its status), an unavailable database (503); anything else
  // is a bug, answered 500 and logged.
  function errorHandler(err, req, res, next) { // eslint-disable-line no-unused-vars
    if (err instanceof NoAnswer || res.headersSent) {
      res.destroy(); // no status line, no body: the client sees its connection closed
      return;
    }
    if (err instanceof HttpError) {
      if (err.headers !== undefined) res.set(err.headers);
      answer(res, err.status, err.message);
      return;
    }
    if (err.type === 'entity.too.large') {
      res.set('Connection', 'close'); // the rest of the body is not read
      answer(res, 413, 'request body over 1 MiB (1048576 bytes)');
      return;
    }
    if (err.type === 'entity.parse.failed') {
      answer(res, 400, `malformed JSON: ${err.message}`);
      return;
    }
    if (typeof err.status === 'number' && err.status >= 400 && err.status < 500) {
      answer(res, err.status, err.message); // the body parser's other refusals (aborted, bad encoding)
      return;
    }
    if (isUnavailable(err)) {
      errorLog.warn({ code: err.code, error: err.message, path: pathOf(req.url) }, 'database unavailable');
      answer(res, 503, 'database unavailable'); // the driver's text only in the log
      return;
    }
    errorLog.error({ err, method: req.method, path: pathOf(req.url) }, 'request failed');
    answer(res, 500, 'internal error (a bug in the service; see its log)');
  }

  return { app, state };
}

function answer(res, status, message) {
  res.status(status).json({ error: message });
}

function pathOf(url) {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

const labels = new Map();

/** routeLabel writes an Express path in the contract's form: /client/:id/balance -> /client/{id}/balance. */
function routeLabel(path) {
  let label = labels.get(path);
  if (label === undefined) {
    label = path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    labels.set(path, label);
  }
  return label;
}

module.exports = { createApp };
