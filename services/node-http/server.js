'use strict';

// node-http: the showdown contract (workloads/README.md) on node:http.
// WORKERS=1 (default) serves from this process; WORKERS=N forks a cluster.

const cluster = require('node:cluster');
const { loadConfig } = require('./lib/config');

const { config, errors } = loadConfig(process.env);
if (errors.length > 0) {
  process.stderr.write(`node-http: bad environment:\n  ${errors.join('\n  ')}\n`);
  process.exit(2);
}

if (config.workers > 1 && cluster.isPrimary) {
  require('./lib/cluster').runPrimary(config);
} else {
  require('./lib/serve').serve(config, cluster.isWorker);
}
