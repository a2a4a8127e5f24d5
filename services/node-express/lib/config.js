'use strict';

// Reading the environment: the common variables of the contract
// (workloads/README.md) plus this stack's knob WORKERS. Every mistake is
// reported at once, naming the variable and what it accepts.

const os = require('node:os');

/** MAX_ID is the largest id the contract accepts: 2^53 - 1. */
const MAX_ID = Number.MAX_SAFE_INTEGER;

/**
 * loadConfig reads the service configuration from env and returns
 * {config, errors}; errors is a list of messages for a person.
 */
function loadConfig(env) {
  const errors = [];
  const config = {
    port: intVar(env, 'PORT', 8080, 0, 65535, errors),
    host: env.HOST || '127.0.0.1',
    databaseUrl: env.DATABASE_URL || '',
    mysqlUrl: env.MYSQL_URL || '',
    poolSize: intVar(env, 'DB_POOL_SIZE', 20, 1, 10000, errors),
    logRequests: boolVar(env, 'LOG_REQUESTS', false, errors),
    workers: workersVar(env, errors),
  };
  urlVar('DATABASE_URL', config.databaseUrl, ['postgres:', 'postgresql:'], 'postgres://user:pw@127.0.0.1:5432/db?sslmode=disable', errors);
  urlVar('MYSQL_URL', config.mysqlUrl, ['mysql:'], 'mysql://user:pw@127.0.0.1:3306/db', errors);
  return { config, errors };
}

// urlVar checks that a database URL (when set) parses and has the right
// scheme; the URL itself is never echoed, as it may hold a password.
function urlVar(name, raw, schemes, example, errors) {
  if (!raw) return;
  let url;
  try {
    url = new URL(raw);
  } catch {
    errors.push(`${name} is not a URL; want e.g. ${example}`);
    return;
  }
  if (!schemes.includes(url.protocol)) {
    errors.push(`${name} has scheme ${url.protocol.slice(0, -1)}; want ${schemes[0].slice(0, -1)}, e.g. ${example}`);
  }
}

function intVar(env, name, dflt, min, max, errors) {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    errors.push(`${name}=${JSON.stringify(raw)}: want an integer in ${min} .. ${max} (default ${dflt})`);
    return dflt;
  }
  return Number(raw);
}

function boolVar(env, name, dflt, errors) {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  errors.push(`${name}=${JSON.stringify(raw)}: want true or false (default ${dflt})`);
  return dflt;
}

// WORKERS: 1 (default) is a single process; N > 1 forks N cluster workers;
// 0 or "auto" forks one per CPU available to this process.
function workersVar(env, errors) {
  const raw = env.WORKERS;
  if (raw === undefined || raw === '') return 1;
  if (raw === 'auto' || raw === '0') return os.availableParallelism();
  if (!/^[0-9]+$/.test(raw) || Number(raw) > 256) {
    errors.push(`WORKERS=${JSON.stringify(raw)}: want 1 (one process), N > 1 (cluster of N), or 0/auto (one per CPU)`);
    return 1;
  }
  return Number(raw);
}

module.exports = { loadConfig, MAX_ID };
