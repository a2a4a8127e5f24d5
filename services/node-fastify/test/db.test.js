'use strict';

// Unit tests of the pools' own bounds, on stand-ins for mysql2's pool (the
// real databases are exercised by showdown verify's outage checks).

const test = require('node:test');
const assert = require('node:assert/strict');
const { createMysqlPool, isUnavailable, asHttpError, CONNECT_TIMEOUT_MS } = require('../lib/db');

/** fakeConnection counts what the pool does with it. */
function fakeConnection(ping) {
  return {
    connection: {},
    released: 0,
    destroyed: 0,
    ping,
    execute: async () => [[{ v: 1 }]],
    release() {
      this.released++;
    },
    destroy() {
      this.destroyed++;
    },
  };
}

/** withPool gives createMysqlPool's wrapper a stand-in mysql2 pool. */
function withPool(getConnection) {
  const pool = createMysqlPool('mysql://u:p@127.0.0.1:1/db', 1);
  pool.pool.end();
  pool.pool = { getConnection };
  return pool;
}

test('mysql: the wait for a connection is bounded; a late one goes back', async () => {
  let deliver;
  const late = fakeConnection(async () => {});
  const pool = withPool(() => new Promise((resolve) => (deliver = () => resolve(late))));
  const start = Date.now();
  await assert.rejects(pool.execute('SELECT 1', []), (err) => {
    assert.equal(err.code, 'POOL_ACQUIRE_TIMEOUT');
    assert.ok(isUnavailable(err), 'reads as unavailable');
    assert.equal(asHttpError(err).status, 503);
    assert.equal(asHttpError(err).message, 'database unavailable');
    return true;
  });
  const took = Date.now() - start;
  assert.ok(took >= CONNECT_TIMEOUT_MS - 50, `gave up after ${took} ms, want about ${CONNECT_TIMEOUT_MS}`);
  deliver();
  await new Promise((r) => setImmediate(r));
  assert.equal(late.released, 1, 'the connection that came late is given back');
});

test('mysql: a connection idle too long that fails its ping is destroyed', async () => {
  const hung = fakeConnection(() => new Promise(() => {})); // a ping nobody answers
  const pool = withPool(async () => hung);
  const [rows] = await pool.execute('SELECT 1', []); // new: no ping
  assert.deepEqual(rows, [{ v: 1 }]);
  assert.equal(hung.released, 1);
  hung.connection[Object.getOwnPropertySymbols(hung.connection)[0]] = Date.now() - 5000; // idle 5 s
  await assert.rejects(pool.execute('SELECT 1', []), (err) => err.code === 'PING_TIMEOUT' && isUnavailable(err));
  assert.equal(hung.destroyed, 1, 'the connection that failed its ping is destroyed');
  assert.equal(hung.released, 1, 'and not given back');
});
