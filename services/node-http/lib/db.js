'use strict';

// The two connection pools, created once at start and the only way the
// service reaches its databases, and the line between "the database is
// unavailable" (503) and "the service has a bug" (500).

const pg = require('pg');
const mysql = require('mysql2/promise');
const { HttpError } = require('./http');

/** CONNECT_TIMEOUT_MS bounds a new connection and a wait for a pooled one. */
const CONNECT_TIMEOUT_MS = 2000;

/** PING_TIMEOUT_MS bounds the health check's ping of each database. */
const PING_TIMEOUT_MS = 1000;

/**
 * createPgPool returns a pg Pool of at most size connections that never
 * closes idle ones and answers within CONNECT_TIMEOUT_MS when it cannot
 * hand out a connection. onError receives errors of idle connections (a
 * restarted server) so they never crash the process.
 */
function createPgPool(url, size, onError) {
  const pool = new pg.Pool({
    connectionString: url,
    max: size,
    idleTimeoutMillis: 0,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    application_name: 'showdown-node-http',
  });
  pool.on('error', onError);
  return pool;
}

/**
 * createMysqlPool returns a mysql2 pool of at most size connections, all
 * kept when idle, with a bounded connect. BIGINT columns come back as
 * decimal strings so ids beyond 2^53 would never be rounded.
 */
function createMysqlPool(url, size) {
  return mysql.createPool({
    uri: url,
    connectionLimit: size,
    maxIdle: size,
    connectTimeout: CONNECT_TIMEOUT_MS,
    enableKeepAlive: true,
    waitForConnections: true,
    queueLimit: 0,
    supportBigNumbers: true,
    bigNumberStrings: true,
  });
}

// Socket-level failures: the server is down, restarting or unreachable.
const NET_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND',
  'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'ENOENT',
]);

// PostgreSQL SQLSTATEs and mysql2 codes that mean "cannot serve you now".
const UNAVAILABLE_CODES = new Set([
  '57P01', '57P02', '57P03', // admin_shutdown, crash_shutdown, cannot_connect_now
  '53300', // too_many_connections
  '28000', '28P01', '3D000', // refused login, unknown database: a misconfigured URL
  'PROTOCOL_CONNECTION_LOST', 'PROTOCOL_SEQUENCE_TIMEOUT', 'PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR',
  'ER_CON_COUNT_ERROR', 'ER_TOO_MANY_USER_CONNECTIONS', 'ER_SERVER_SHUTDOWN',
  'ER_ACCESS_DENIED_ERROR', 'ER_BAD_DB_ERROR', 'POOL_CLOSED',
]);

// pg reports lost connections and pool timeouts with messages, not codes.
const PG_UNAVAILABLE_MESSAGE =
  /timeout exceeded when trying to connect|Connection terminated|connection error|not queryable|pool after calling end|Client was closed/i;

/**
 * isUnavailable reports whether err means the database cannot be reached
 * or refuses connections (503), as opposed to a bug (500).
 */
function isUnavailable(err) {
  if (!err || typeof err !== 'object') return false;
  const code = err.code;
  if (typeof code === 'string') {
    if (NET_CODES.has(code) || UNAVAILABLE_CODES.has(code)) return true;
    if (code.length === 5 && code.startsWith('08')) return true; // connection_exception class
  }
  if (err.fatal === true) return true; // mysql2: the connection itself failed
  if (typeof err.message === 'string' && PG_UNAVAILABLE_MESSAGE.test(err.message)) return true;
  if (Array.isArray(err.errors)) return err.errors.some(isUnavailable); // AggregateError of a multi-address connect
  return false;
}

/**
 * asHttpError turns a database error into the HttpError to answer: 503
 * when the database is unavailable, else the error itself (a 500).
 */
function asHttpError(err) {
  if (err instanceof HttpError) return err;
  // The driver's text (addresses, user and database names, SQL) stays out of the answer.
  if (isUnavailable(err)) return new HttpError(503, 'database unavailable');
  return err;
}

/** NOT_CONFIGURED is the answer of a workload whose database URL is unset. */
const NOT_CONFIGURED = new HttpError(503, 'database not configured');

/**
 * ping resolves when the pool answers SELECT 1 within PING_TIMEOUT_MS and
 * rejects otherwise.
 */
function ping(pool, name) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${name}: no answer to ping within ${PING_TIMEOUT_MS} ms`)), PING_TIMEOUT_MS);
  });
  const query = pool.query('SELECT 1').catch((err) => {
    throw new Error(`${name}: ${err.message || err.code}`);
  });
  return Promise.race([query, timeout]).finally(() => clearTimeout(timer));
}

module.exports = {
  CONNECT_TIMEOUT_MS,
  PING_TIMEOUT_MS,
  NOT_CONFIGURED,
  createPgPool,
  createMysqlPool,
  isUnavailable,
  asHttpError,
  ping,
};
