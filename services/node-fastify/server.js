'use strict';

// node-fastify: the showdown contract (workloads/README.md) on Fastify 5.
// WORKERS=1 (default) serves from this process; WORKERS=N forks a cluster.

// A SIGTERM that arrives while the modules load must still end in a clean
// exit 0: remember it until the real handlers are installed.
let stopEarly = false;
const remember = () => {
  stopEarly = true;
};
process.on('SIGTERM', remember);
process.on('SIGINT', remember);

const cluster = require('node:cluster');
const { loadConfig } = require('./lib/config');

const { config, errors } = loadConfig(process.env);
if (errors.length > 0) {
  process.stderr.write(`node-fastify: bad environment:\n  ${errors.join('\n  ')}\n`);
  process.exit(2);
}

const stop =
  config.workers > 1 && cluster.isPrimary
    ? require('./lib/cluster').runPrimary(config)
    : require('./lib/serve').serve(config, cluster.isWorker);
process.off('SIGTERM', remember);
process.off('SIGINT', remember);
if (stopEarly) stop();
