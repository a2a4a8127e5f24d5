'use strict';

// Cluster mode (WORKERS > 1): the primary forks the workers, which share
// the listening port (node:cluster's round-robin), serves their aggregated
// metrics, re-forks a worker that crashes, and on SIGTERM forwards the
// signal and exits 0 once every worker has finished.

const cluster = require('node:cluster');
const { serveClusterMetrics } = require('./metrics');

/** STOP_MS bounds the wait for the workers after SIGTERM. */
const STOP_MS = 9500;

/**
 * runPrimary forks config.workers workers and supervises them; it returns
 * the function that stops them (also run on SIGTERM and SIGINT).
 */
function runPrimary(config) {
  let stopping = false;
  let failed = false;
  serveClusterMetrics(cluster);

  let announced = false;
  cluster.on('listening', (worker, address) => {
    worker.ready = true;
    if (!announced && Object.values(cluster.workers).every((w) => w.ready)) {
      announced = true;
      process.stderr.write(
        `node-express listening on ${address.address}:${address.port} with ${config.workers} workers ` +
          `(pool ${config.poolSize} per worker and database)\n`,
      );
    }
  });
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      // A worker killed by our SIGTERM before it installed its handler was
      // still starting: it had nothing in flight.
      if (code !== 0 && signal !== 'SIGTERM') {
        failed = true;
        process.stderr.write(`worker ${worker.process.pid} exited with ${code ?? signal} while stopping\n`);
      }
      if (Object.keys(cluster.workers).length === 0) process.exit(failed ? 1 : 0);
      return;
    }
    if (!worker.ready) {
      // It died before listening: a configuration or port problem that a
      // new worker would only repeat.
      process.stderr.write(`worker ${worker.process.pid} failed to start (exit ${code ?? signal}); stopping\n`);
      stop(1);
      return;
    }
    process.stderr.write(`worker ${worker.process.pid} died (exit ${code ?? signal}); starting a new one\n`);
    cluster.fork();
  });

  function stop(code) {
    if (stopping) return;
    stopping = true;
    if (code) failed = true;
    for (const w of Object.values(cluster.workers)) w.process.kill('SIGTERM');
    setTimeout(() => {
      process.stderr.write(`workers still running after ${STOP_MS} ms; killing them\n`);
      for (const w of Object.values(cluster.workers)) w.process.kill('SIGKILL');
      process.exit(1);
    }, STOP_MS).unref();
    if (Object.keys(cluster.workers).length === 0) process.exit(failed ? 1 : 0);
  }
  process.on('SIGTERM', () => stop(0));
  process.on('SIGINT', () => stop(0));

  for (let i = 0; i < config.workers; i++) cluster.fork();
  return () => stop(0);
}

module.exports = { runPrimary };
