// showdown:shared begin db-pools

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
 * IDLE_CHECK_MS: a pooled connection idle for longer is pinged (within
 * PING_TIMEOUT_MS) before it is lent out, as pgx and HikariCP do. That is
 * how a hung database (connections open, nothing answers) gets a 503 in
 * time, while a slow query is left alone.
 */
const IDLE_CHECK_MS = 1000;

/**
 * QUERY_TIMEOUT_MS is a safety net on one statement once a request has a
 * connection (a database that hangs in the middle of a busy period), not a
 * deadline for slow queries: a full-table-scan plan must be slow, not fail.
 */
const QUERY_TIMEOUT_MS = 30000;

/** INT8_OID is PostgreSQL's bigint type. */
const INT8_OID = 20;

/**
 * int8 reads a bigint column as a JavaScript number, so it goes into the
 * JSON answer as a number (pg's default, a decimal string, would be
 * written as a string). Exact for the contract's values: ids are below
 * 2^53 and amounts at most 10^12.
 */
const int8 = (text) => Number(text);

/** pgTypes is pg's type table with bigint read by int8. */
const pgTypes = {
  getTypeParser: (oid, format) => (oid === INT8_OID ? int8 : pg.types.getTypeParser(oid, format)),
};

/** releasedAt marks when a connection went back to its pool. */
const releasedAt = Symbol('releasedAt');

/** idleTooLong reports whether conn has been idle past IDLE_CHECK_MS. */
function idleTooLong(conn) {
  return conn[releasedAt] !== undefined && Date.now() - conn[releasedAt] > IDLE_CHECK_MS;
}

/** within rejects with an unavailable error (code) when promise takes over ms. */
function within(promise, ms, code, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => {
      const err = new Error(`${what}: no answer within ${ms} ms`);
      err.code = code;
      reject(err);
    }, ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * CheckedPgPool is a pg Pool that pings a connection idle past
 * IDLE_CHECK_MS before lending it, so pool.query, pool.connect and every
 * caller get the check.
 */
class CheckedPgPool extends pg.Pool {
  constructor(options) {
    super(options);
    this.on('release', (err, client) => {
      client[releasedAt] = Date.now();
    });
    // A connection that fails while lent out (the server shut down or
    // crashed under a transaction: 57P01, a reset) emits 'error' on its
    // client. pg's pool listens only while the client is idle, and an
    // 'error' event nobody hears ends the process. The request holding
    // the client gets the same error from its query and releases the
    // client broken, so this listener only has to hear it.
    this.on('connect', (client) => {
      client.on('error', () => {});
    });
  }

  connect(cb) {
    const checked = super.connect().then(async (client) => {
      if (!idleTooLong(client)) return client;
      try {
        await client.query({ text: 'SELECT 1', query_timeout: PING_TIMEOUT_MS });
      } catch (err) {
        client.release(err); // a connection that failed its ping is closed
        throw err;
      }
      return client;
    });
    if (typeof cb !== 'function') return checked;
    checked.then((client) => cb(undefined, client, client.release), (err) => cb(err));
    return undefined;
  }
}

/**
 * createPgPool returns a pg Pool of at most size connections that never
 * closes idle ones, answers within CONNECT_TIMEOUT_MS when it cannot hand
 * out a connection, checks a connection idle past IDLE_CHECK_MS before
 * lending it and gives each statement QUERY_TIMEOUT_MS. onError receives
 * errors of idle connections (a restarted server) so they never crash the
 * process.
 */
function createPgPool(url, size, onError) {
  const pool = new CheckedPgPool({
    connectionString: url,
    max: size,
    idleTimeoutMillis: 0,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    keepAlive: true,
    types: pgTypes,
    application_name: 'showdown-node-express',
  });
  pool.on('error', onError);
  return pool;
}

/**
 * MysqlPool is the mysql2 pool with the bounds mysql2 lacks: a wait for a
 * connection of at most CONNECT_TIMEOUT_MS (mysql2 would queue a request
 * for ever), a ping of a connection idle past IDLE_CHECK_MS, and
 * QUERY_TIMEOUT_MS per statement. A connection that failed is destroyed,
 * never lent again.
 */
class MysqlPool {
  constructor(pool) {
    this.pool = pool;
  }

  /** acquire resolves with a connection, or rejects after CONNECT_TIMEOUT_MS. */
  acquire() {
    let late = false;
    const got = this.pool.getConnection();
    return within(got, CONNECT_TIMEOUT_MS, 'POOL_ACQUIRE_TIMEOUT', 'mysql pool').catch((err) => {
      if (err.code === 'POOL_ACQUIRE_TIMEOUT') {
        late = true;
        got.then((conn) => late && conn.release(), () => {}); // given back when it comes
      }
      throw err;
    });
  }

  /** withConnection runs fn on a checked connection and gives it back. */
  async withConnection(fn) {
    const conn = await this.acquire();
    const core = conn.connection;
    let broken = false;
    try {
      if (idleTooLong(core)) await within(conn.ping(), PING_TIMEOUT_MS, 'PING_TIMEOUT', 'mysql ping');
      return await fn(conn);
    } catch (err) {
      broken = isUnavailable(err);
      throw err;
    } finally {
      if (broken) {
        conn.destroy();
      } else {
        core[releasedAt] = Date.now();
        conn.release();
      }
    }
  }

  /** execute runs a server-side prepared statement. */
  execute(sql, values) {
    return this.withConnection((conn) => conn.execute({ sql, timeout: QUERY_TIMEOUT_MS }, values));
  }

  /** query runs a text statement. */
  query(sql, values) {
    return this.withConnection((conn) => conn.query({ sql, timeout: QUERY_TIMEOUT_MS }, values));
  }

  end() {
    return this.pool.end();
  }
}

/**
 * createMysqlPool returns a MysqlPool of at most size connections, all
 * kept when idle, with a bounded connect. BIGINT columns come back as
 * numbers, or as decimal strings past 2^53 so none is ever rounded.
 */
function createMysqlPool(url, size) {
  return new MysqlPool(
    mysql.createPool({
      uri: url,
      connectionLimit: size,
      maxIdle: size,
      connectTimeout: CONNECT_TIMEOUT_MS,
      enableKeepAlive: true,
      waitForConnections: true,
      queueLimit: 0,
      supportBigNumbers: true,
      bigNumberStrings: false,
    }),
  );
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
  'POOL_ACQUIRE_TIMEOUT', 'PING_TIMEOUT', // MysqlPool's own bounds
]);

// pg reports lost connections and pool timeouts with messages, not codes.
const PG_UNAVAILABLE_MESSAGE =
  /timeout exceeded when trying to connect|Connection terminated|connection error|not queryable|pool after calling end|Client was closed|Query read timeout/i;

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
// showdown:shared end db-pools

/**
 * needsDatabase returns the middleware that answers 503 "database not
 * configured" for every request of a workload whose pool is null, before
 * its body is read.
 */
function needsDatabase(pool) {
  return (req, res, next) => next(pool ? undefined : NOT_CONFIGURED);
}

// showdown:shared begin db-ping

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
// showdown:shared end db-ping

module.exports = {
  CONNECT_TIMEOUT_MS,
  PING_TIMEOUT_MS,
  IDLE_CHECK_MS,
  QUERY_TIMEOUT_MS,
  NOT_CONFIGURED,
  needsDatabase,
  createPgPool,
  createMysqlPool,
  isUnavailable,
  asHttpError,
  ping,
};
