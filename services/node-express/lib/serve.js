'use strict';

// One serving process (the only one, or a cluster worker): pools, logger,
// the Express app on a node:http server, graceful shutdown.

const http = require('node:http');
const net = require('node:net');
const pino = require('pino');
const { createApp } = require('./app');
const { createPgPool, createMysqlPool } = require('./db');
const { createMetrics } = require('./metrics');

/** KEEP_ALIVE_TIMEOUT_MS keeps idle client connections open between requests. */
const KEEP_ALIVE_TIMEOUT_MS = 65000;

// Shutdown timing, within the contract's 10 s from SIGTERM to exit.
/** DRAIN_WINDOW_MS is how long idle keep-alive connections stay open after SIGTERM. */
const DRAIN_WINDOW_MS = 500;
/** GRACE_MS is how long after SIGTERM requests in flight may take before their connections are cut. */
const GRACE_MS = 8000;
/** POOL_CLOSE_MS bounds closing the pools, and then flushing the request log, at exit. */
const POOL_CLOSE_MS = 1000;

/**
 * serve starts the HTTP server of config; clustered says it runs as a
 * cluster worker. On SIGTERM or SIGINT it stops accepting, finishes the
 * requests in flight, closes the pools and exits 0. It returns that
 * shutdown function.
 */
function serve(config, clustered) {
  // The service's own failures go to stderr, synchronously (they are rare).
  const errorLog = pino({ base: { pid: process.pid } }, pino.destination({ dest: 2, sync: true }));
  // The request log: one JSON line per request on stdout. Asynchronous
  // (sonic-boom buffers while a write is in flight; flushed at exit), except
  // in a cluster, where each line must be one write(2) so the workers'
  // lines never interleave.
  const requestLog = config.logRequests
    ? pino({ base: { pid: process.pid } }, pino.destination({ dest: 1, sync: clustered }))
    : null;

  // An idle pooled connection that dies (a restarted server) is dropped by
  // the pool, which reconnects on demand; say so once per connection.
  const onPoolError = (err) =>
    errorLog.warn({ code: err.code, error: err.message }, 'idle PostgreSQL connection lost; the pool reconnects on demand');
  const pgPool = config.databaseUrl ? createPgPool(config.databaseUrl, config.poolSize, onPoolError) : null;
  const mysqlPool = config.mysqlUrl ? createMysqlPool(config.mysqlUrl, config.poolSize) : null;
  const metrics = createMetrics({ clustered });
  const { app, state } = createApp({ pgPool, mysqlPool, metrics, requestLog, errorLog });

  const server = http.createServer({ keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS, noDelay: true }, app);
  server.on('clientError', (err, socket) => answerClientError(err, socket));
  server.on('error', (err) => {
    errorLog.fatal({ err }, `cannot listen on ${config.host}:${config.port}: ${err.message}; set PORT/HOST to a free address`);
    process.exit(1);
  });
  server.listen(config.port, config.host, () => {
    if (!clustered) {
      const { address, port } = server.address();
      process.stderr.write(
        `node-express listening on ${address}:${port} (postgres ${pgPool ? 'on' : 'off'}, mysql ${mysqlPool ? 'on' : 'off'}, pool ${config.poolSize})\n`,
      );
    }
  });

  const closePools = () => within(POOL_CLOSE_MS, Promise.allSettled([pgPool && pgPool.end(), mysqlPool && mysqlPool.end()]));

  // The asynchronous request log may have a write in flight: let it land.
  const flushRequestLog = () =>
    within(
      POOL_CLOSE_MS,
      new Promise((resolve) => {
        if (requestLog === null) resolve();
        else requestLog.flush(() => resolve());
      }),
    );

  const shutdown = () => {
    if (state.closing) return;
    state.closing = true;
    if (!server.listening) {
      // Nothing was served yet: no request can be in flight.
      closePools().then(() => process.exit(0));
      return;
    }
    // Stop accepting now, but leave the idle keep-alive connections open
    // for DRAIN_WINDOW_MS: a request may already sit unread in one, and
    // closing it would reset a request the client sent before the signal.
    // (http.Server.close would close them at once; net.Server.close only
    // stops listening.) Meanwhile every answer carries Connection: close.
    net.Server.prototype.close.call(server, () => {
      clearTimeout(cut);
      closePools()
        .then(flushRequestLog)
        .then(() => process.exit(0));
    });
    const idle = setTimeout(() => server.closeIdleConnections(), DRAIN_WINDOW_MS);
    const cut = setTimeout(() => {
      clearTimeout(idle);
      errorLog.warn(`requests still in flight ${GRACE_MS} ms after SIGTERM; closing their connections`);
      server.closeAllConnections();
    }, GRACE_MS);
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  return shutdown;
}

// within resolves when promise settles or after ms, whichever comes first.
function within(ms, promise) {
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return Promise.race([promise.catch(() => {}), late]).finally(() => clearTimeout(timer));
}

const STATUS_LINE = { 400: 'Bad Request', 408: 'Request Timeout', 413: 'Payload Too Large', 431: 'Request Header Fields Too Large' };

// answerClientError answers a request Node could not parse with a JSON
// error, as every other answer, instead of Node's bare 400.
function answerClientError(err, socket) {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  let status = 400;
  if (err.code === 'HPE_HEADER_OVERFLOW') status = 431;
  else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') status = 408;
  const body = JSON.stringify({ error: `malformed HTTP request (${err.code || err.message})` });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_LINE[status]}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

module.exports = { serve };
