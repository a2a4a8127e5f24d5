'use strict';

// The Fastify application: the workloads as plugins, 404 and 405 in JSON,
// the error handler, metrics and the optional request log.

const Fastify = require('fastify');
const { LogController } = require('fastify');
const { HttpError, NoAnswer, MAX_BODY, discardBodies, ERROR } = require('./http');
const { ping, isUnavailable } = require('./db');
const { stringRoutes } = require('./workloads/string');
const { bankRoutes } = require('./workloads/bank');
const { usersRoutes } = require('./workloads/users');
const { skuRoutes } = require('./workloads/sku');

/** DOT_SEGMENT matches a path with a "." or ".." segment. */
const DOT_SEGMENT = /(^|\/)\.{1,2}(\/|$)/;

/** BODY_ERRORS are the messages of Fastify's body errors that would mislead. */
const BODY_ERRORS = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'malformed JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'malformed JSON: the body is empty',
  FST_ERR_CTP_BODY_TOO_LARGE: 'request body over 1 MiB (1048576 bytes)',
};

/** METHODS are the methods a known path answers 405 to when it does not serve them. */
const METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'];

/**
 * createApp returns {app, state}: app is the Fastify instance that serves
 * the contract (not yet listening); state.closing, once set, makes every
 * answer close its connection and /health report 503.
 *
 * deps: pgPool and mysqlPool (null when not configured), metrics
 * ({observe, render, commitResolved}), requestLog (a pino logger or null)
 * and errorLog (a pino logger for the service's own failures).
 */
function createApp({ pgPool, mysqlPool, metrics, requestLog, errorLog }) {
  const state = { closing: false };
  const app = Fastify({
    // Fastify's logger is off unless LOG_REQUESTS; then it is the request
    // log's pino at level warn (no "Server listening" line among the
    // requests), and RequestLog writes one line per request with the
    // contract's keys instead of Fastify's two.
    ...(requestLog !== null
      ? { loggerInstance: requestLog.child({}, { level: 'warn' }), logController: new RequestLog(requestLog) }
      : { logger: false }),
    bodyLimit: MAX_BODY,
    // A request on a kept-alive connection during shutdown is served, not
    // refused with 503: the contract finishes what was sent before SIGTERM.
    return503OnClosing: false,
    // Coercion would turn "10" and true into integers, which the contract
    // refuses (400); unknown fields are ignored.
    ajv: { customOptions: { coerceTypes: false } },
  });
  app.decorateRequest('unmatched', false);

  // Bodies are read only where a route's plugin asks for JSON (jsonBodies);
  // elsewhere they are dropped unparsed.
  discardBodies(app);

  // onRequest: ask the client to close once the service is closing, and
  // answer a path with a dot segment 404 (find-my-way would match
  // /client/../balance to /client/:id/balance).
  app.addHook('onRequest', (request, reply, done) => {
    if (state.closing) reply.header('Connection', 'close');
    const url = request.url;
    const q = url.indexOf('?');
    if (DOT_SEGMENT.test(q === -1 ? url : url.slice(0, q))) {
      request.unmatched = true;
      reply.code(404).send({ error: 'no such path' });
      return;
    }
    done();
  });
  // onResponse: count and time every answer.
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.unmatched || request.is404 ? 'unmatched' : routeLabel(request.routeOptions.url);
    metrics.observe(route, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });

  // Every path and its methods, for the 405 answers added last.
  const served = new Map();
  app.addHook('onRoute', (route) => {
    const methods = served.get(route.url) || new Set();
    for (const m of [].concat(route.method)) methods.add(m);
    served.set(route.url, methods);
  });

  app.register(stringRoutes);
  app.register(bankRoutes, { pool: pgPool, errorLog, metrics });
  app.register(usersRoutes, { pool: pgPool });
  app.register(skuRoutes, { pool: mysqlPool });
  app.get('/health', { schema: { response: { 200: { type: 'object', properties: { status: { type: 'string' } } }, '5xx': ERROR } } }, health);
  app.get('/metrics', scrape);
  // A known path with another method: 405 with Allow.
  app.register(async (instance) => {
    for (const [url, methods] of [...served]) {
      const allow = [...methods].sort().join(', ');
      const others = METHODS.filter((m) => !methods.has(m));
      instance.route({
        method: others,
        url,
        exposeHeadRoute: false,
        handler: async (request) => {
          throw new HttpError(405, `method ${request.method} not allowed; use ${allow}`, { Allow: allow });
        },
      });
    }
  });

  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ error: 'no such path' });
  });

  // The error handler answers every failure in JSON: the contract's
  // errors (HttpError), schema validation and Fastify's body errors
  // (malformed JSON 400, over 1 MiB 413) with their status, an unavailable
  // database 503; anything else is a bug, answered 500 and logged.
  app.setErrorHandler((err, request, reply) => {
    if (err instanceof NoAnswer) {
      reply.hijack();
      reply.raw.destroy(); // no status line, no body: the client sees its connection closed
      return;
    }
    if (err instanceof HttpError) {
      if (err.headers !== undefined) reply.headers(err.headers);
      reply.code(err.status).send({ error: err.message });
      return;
    }
    if (err.validation) {
      reply.code(400).send({ error: err.message });
      return;
    }
    const status = err.statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      if (status === 413) reply.header('Connection', 'close'); // the rest of the body is not read
      // Fastify's JSON messages name application/json, whatever was sent.
      reply.code(status).send({ error: BODY_ERRORS[err.code] || err.message });
      return;
    }
    if (isUnavailable(err)) {
      errorLog.warn({ code: err.code, error: err.message, path: request.url }, 'database unavailable');
      reply.code(503).send({ error: 'database unavailable' }); // the driver's text only in the log
      return;
    }
    errorLog.error({ err, method: request.method, path: request.url }, 'request failed');
    reply.code(500).send({ error: 'internal error (a bug in the service; see its log)' });
  });

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
    return { status: 'ok' };
  }

  async function scrape(request, reply) {
    const { contentType, body } = await metrics.render();
    reply.type(contentType);
    return body;
  }

  return { app, state };
}

/**
 * RequestLog makes Fastify's request logging one line per completed
 * request with the contract's keys (method, path, status, duration_ms),
 * instead of an "incoming request" and a "request completed" line.
 */
class RequestLog extends LogController {
  constructor(log) {
    super();
    this.log = log;
  }

  incomingRequest() {}

  requestCompleted(error, request, reply) {
    const url = request.url;
    const q = url.indexOf('?');
    this.log.info({
      method: request.method,
      path: q === -1 ? url : url.slice(0, q),
      status: reply.statusCode,
      duration_ms: Math.round(reply.elapsedTime * 1000) / 1000,
    });
  }
}

const labels = new Map();

/** routeLabel writes a Fastify path in the contract's form: /client/:id/balance -> /client/{id}/balance. */
function routeLabel(url) {
  if (url === undefined) return 'unmatched';
  let label = labels.get(url);
  if (label === undefined) {
    label = url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    labels.set(url, label);
  }
  return label;
}

module.exports = { createApp };
