'use strict';

// bank: clients and transfers on PostgreSQL (workloads/bank/README.md).
//
// bigint columns arrive as numbers (lib/db.js reads them so), exact for
// the contract's ids and amounts.

const { MAX_ID } = require('../config');
const { setTimeout: sleep } = require('node:timers/promises');
const { HttpError, NoAnswer, objectBody, intField, pathInt, pathId } = require('../http');
const { needsDatabase, QUERY_TIMEOUT_MS, asHttpError, isUnavailable } = require('../db');
const { BANK } = require('../queries');

/** MAX_AMOUNT bounds a deposit and a transfer: 10^12. */
const MAX_AMOUNT = 1e12;

const NOT_FOUND = 'client not found';

/**
 * RESOLVE_TIMEOUT_MS is how long after a failed COMMIT the service keeps
 * trying to learn its outcome before it closes the client's connection
 * without an answer.
 */
const RESOLVE_TIMEOUT_MS = 30000;

/** RESOLVE_PAUSE_MS is the pause between two failed attempts to learn it. */
const RESOLVE_PAUSE_MS = 150;

/**
 * InDoubt is a COMMIT that failed (a broken connection, a timeout, a
 * shutdown): the transfer with ledger row id may or may not be committed.
 */
class InDoubt extends Error {
  constructor(id, cause) {
    super(`COMMIT of ledger row ${id} in doubt: ${cause && cause.message}`);
    this.id = id;
    this.cause = cause;
  }
}

/**
 * bankRoutes registers the bank workload's routes on route over pool
 * (null: not configured); json is the body parser. errorLog logs each
 * in-doubt COMMIT's resolution and metrics.commitResolved counts it.
 */
function bankRoutes(route, json, pool, { errorLog, metrics }) {
  const configured = needsDatabase(pool);
  route('post', '/client/new/:balance', configured, async (req, res) => {
    const balance = pathInt(req.params.balance, 'balance', 0, MAX_AMOUNT);
    const { rows } = await pool
      .query({ name: 'create_client', text: BANK.create_client, values: [balance] })
      .catch(fail);
    res.json({ id: rows[0].id, balance: rows[0].balance });
  });
  route('post', '/transaction', configured, json, async (req, res) => {
    const body = objectBody(req);
    const from = intField(body, 'from_client_id', 1, MAX_ID);
    const to = intField(body, 'to_client_id', 1, MAX_ID);
    const amount = intField(body, 'amount', 1, MAX_AMOUNT);
    if (from === to) throw new HttpError(400, 'from_client_id and to_client_id must differ');
    const id = await transfer(pool, from, to, amount).catch((err) => {
      if (err instanceof InDoubt) return answerInDoubt(pool, from, to, amount, err, errorLog, metrics);
      return fail(err);
    });
    res.json({ id, from_client_id: from, to_client_id: to, amount });
  });
  route('get', '/client/:id/balance', configured, async (req, res) => {
    const id = pathId(req.params.id, 'id');
    const { rows } = await pool.query({ name: 'balance', text: BANK.balance, values: [id] }).catch(fail);
    if (rows.length === 0) throw new HttpError(404, NOT_FOUND);
    res.json({ balance: rows[0].balance });
  });
}

/**
 * transfer moves amount from one client to another in one READ COMMITTED
 * transaction and resolves with the ledger row's id. lock_clients locks
 * both rows in id order, so concurrent transfers never deadlock.
 */
async function transfer(pool, from, to, amount) {
  const client = await pool.connect();
  let broken; // set when the connection must not go back to the pool
  try {
    await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
    const locked = await client.query({ name: 'lock_clients', text: BANK.lock_clients, values: [from, to] });
    if (locked.rows.length < 2) {
      await client.query('ROLLBACK');
      throw new HttpError(404, NOT_FOUND);
    }
    const payer = locked.rows[0].id === from ? locked.rows[0] : locked.rows[1];
    if (payer.balance < amount) {
      await client.query('ROLLBACK');
      throw new HttpError(409, 'insufficient funds');
    }
    const moved = await client.query({
      name: 'transfer',
      text: BANK.transfer,
      values: [amount, from, amount, to, from, to, amount],
    });
    const id = moved.rows[0].id;
    try {
      await client.query('COMMIT');
    } catch (err) {
      broken = err || new Error('COMMIT failed'); // never lend this connection again
      throw new InDoubt(id, err);
    }
    return id;
  } catch (err) {
    if (err instanceof InDoubt) {
      // broken is set: the connection is closed on release.
    } else if (isUnavailable(err)) {
      broken = err; // a ROLLBACK would wait as long again; closing the connection rolls back
    } else if (!(err instanceof HttpError)) {
      await client.query('ROLLBACK').catch((rollbackErr) => {
        broken = rollbackErr;
      });
    }
    throw err;
  } finally {
    client.release(broken);
  }
}

/**
 * answerInDoubt resolves a transfer whose COMMIT failed: the ledger row's
 * id when the row exists (200), a 503 when it does not, and NoAnswer (the
 * connection is closed without a response) when the database cannot tell
 * within RESOLVE_TIMEOUT_MS. One log line says which.
 */
async function answerInDoubt(pool, from, to, amount, doubt, errorLog, metrics) {
  const start = Date.now();
  const { committed, attempts, error } = await ledgerRowExists(pool, from, to, amount, doubt.id);
  const outcome = error !== undefined ? 'unknown' : committed ? 'committed' : 'not_committed';
  if (metrics && metrics.commitResolved) metrics.commitResolved(outcome);
  if (errorLog) {
    const fields = {
      outcome,
      ledger_id: doubt.id,
      from_client_id: from,
      to_client_id: to,
      attempts,
      resolve_ms: Date.now() - start,
      commit_error: doubt.cause && doubt.cause.message,
    };
    if (error !== undefined) {
      errorLog.warn({ ...fields, error: error.message }, "in-doubt COMMIT unresolved: closing the client's connection without an answer");
    } else {
      errorLog.info(fields, 'in-doubt COMMIT resolved');
    }
  }
  if (error !== undefined) throw new NoAnswer(doubt.message);
  if (!committed) throw new HttpError(503, 'database unavailable');
  return doubt.id;
}

/**
 * ledgerRowExists tells whether ledger row id exists, as this transfer's, trying on fresh
 * pooled connections until one attempt succeeds or RESOLVE_TIMEOUT_MS has
 * passed, pausing RESOLVE_PAUSE_MS between failed attempts. It resolves
 * with {committed, attempts} or {error, attempts}.
 */
async function ledgerRowExists(pool, from, to, amount, id) {
  const deadline = Date.now() + RESOLVE_TIMEOUT_MS;
  const maxAttempts = Math.floor(RESOLVE_TIMEOUT_MS / RESOLVE_PAUSE_MS) + 1;
  let error;
  for (let attempts = 1; ; attempts++) {
    try {
      return { committed: await ledgerRowOnce(pool, from, to, amount, id, deadline), attempts };
    } catch (err) {
      error = err;
    }
    if (attempts >= maxAttempts || Date.now() + RESOLVE_PAUSE_MS >= deadline) return { error, attempts };
    await sleep(RESOLVE_PAUSE_MS);
  }
}

/**
 * ledgerRowOnce is one attempt of ledgerRowExists: a READ COMMITTED
 * transaction on a pooled connection that runs lock_clients (it waits
 * until the original transaction, should its backend still be alive, has
 * ended) and ledger_row, then rolls back. A connection that failed is
 * closed, never lent again.
 */
async function ledgerRowOnce(pool, from, to, amount, id, deadline) {
  const client = await pool.connect(); // bounded by the pool's connection timeout
  let broken;
  const bound = () => Math.max(1, Math.min(QUERY_TIMEOUT_MS, deadline - Date.now()));
  try {
    await client.query({ text: 'BEGIN ISOLATION LEVEL READ COMMITTED', query_timeout: bound() });
    await client.query({ name: 'lock_clients', text: BANK.lock_clients, values: [from, to], query_timeout: bound() });
    const { rows } = await client.query({ name: 'ledger_row', text: BANK.ledger_row, values: [id, from, to, amount], query_timeout: bound() });
    await client.query({ text: 'ROLLBACK', query_timeout: bound() }).catch((err) => {
      broken = err; // what was read stands; the connection is closed, which rolls back
    });
    return rows.length > 0;
  } catch (err) {
    broken = err;
    throw err;
  } finally {
    client.release(broken);
  }
}

function fail(err) {
  throw asHttpError(err);
}

module.exports = { bankRoutes, transfer };
