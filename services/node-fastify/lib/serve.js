'use strict';

// One serving process (the only one, or a cluster worker): pools, loggers,
// the Fastify app, graceful shutdown.

const pino = require('pino');
const { createApp } = require('./app');
const { createPgPool, createMysqlPool } = require('./db');
const { createMetrics } = require('./metrics');

/** GRACE_MS is how long after SIGTERM requests in flight may take before their connections are cut. */
const GRACE_MS = 8000;
/** POOL_CLOSE_MS bounds closing the pools, and then flushing the request log, at exit. */
const POOL_CLOSE_MS = 1000;

/**
 * serve starts the Fastify app of config; clustered says it runs as a
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

  const onPoolError = (err) =>
    errorLog.warn({ code: err.code, error: err.message }, 'idle PostgreSQL connection lost; the pool reconnects on demand');
  const pgPool = config.databaseUrl ? createPgPool(config.databaseUrl, config.poolSize, onPoolError) : null;
  const mysqlPool = config.mysqlUrl ? createMysqlPool(config.mysqlUrl, config.poolSize) : null;
  const metrics = createMetrics({ clustered });
  const { app, state } = createApp({ pgPool, mysqlPool, metrics, requestLog, errorLog });

  // The pools close once the server has closed (Fastify's onClose).
  app.addHook('onClose', async () => {
    await within(POOL_CLOSE_MS, Promise.allSettled([pgPool && pgPool.end(), mysqlPool && mysqlPool.end()]));
  });

  let listening = false;
  app.listen({ port: config.port, host: config.host }).then(
    () => {
      listening = true;
      if (!clustered) {
        const { address, port } = app.server.address();
        process.stderr.write(
          `node-fastify listening on ${address}:${port} (postgres ${pgPool ? 'on' : 'off'}, mysql ${mysqlPool ? 'on' : 'off'}, pool ${config.poolSize})\n`,
        );
      }
      if (state.closing) shutdown(true);
    },
    (err) => {
      errorLog.fatal({ err }, `cannot listen on ${config.host}:${config.port}: ${err.message}; set PORT/HOST to a free address`);
      process.exit(1);
    },
  );

  // The asynchronous request log may have a write in flight: let it land.
  const flushRequestLog = () =>
    within(
      POOL_CLOSE_MS,
      new Promise((resolve) => {
        if (requestLog === null) resolve();
        else requestLog.flush(() => resolve());
      }),
    );

  // shutdown: app.close stops listening, closes the idle kept-alive
  // connections, waits for the requests in flight (every answer meanwhile
  // says Connection: close) and runs onClose (the pools).
  function shutdown(again) {
    if (state.closing && !again) return;
    state.closing = true;
    if (!listening) return; // listen's callback calls again
    const cut = setTimeout(() => {
      errorLog.warn(`requests still in flight ${GRACE_MS} ms after SIGTERM; closing their connections`);
      app.server.closeAllConnections();
    }, GRACE_MS);
    cut.unref();
    app
      .close()
      .then(flushRequestLog)
      .then(
        () => process.exit(0),
        (err) => {
          errorLog.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
  }
  const stop = () => shutdown(false);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  return stop;
}

// within resolves when promise settles or after ms, whichever comes first.
function within(ms, promise) {
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return Promise.race([promise.catch(() => {}), late]).finally(() => clearTimeout(timer));
}

module.exports = { serve };
