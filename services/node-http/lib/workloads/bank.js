'use strict';

// bank: clients and transfers on PostgreSQL (workloads/bank/README.md).
//
// pg returns bigint columns as decimal strings; they are written into the
// JSON as they come, so no id or balance is ever rounded through a double.

const { MAX_ID } = require('../config');
const { HttpError, readJsonObject, intField, pathInt, pathId } = require('../http');
const { NOT_CONFIGURED, asHttpError, isUnavailable } = require('../db');
const { BANK } = require('../queries');

/** MAX_AMOUNT bounds a deposit and a transfer: 10^12. */
const MAX_AMOUNT = 1e12;

const NOT_FOUND = 'client not found';

/** bankRoutes returns the bank workload's routes over pool (null: not configured). */
function bankRoutes(pool) {
  return [
    {
      method: 'POST',
      pattern: '/client/new/{balance}',
      async handle(req, params) {
        if (!pool) throw NOT_CONFIGURED;
        const balance = pathInt(params.balance, 'balance', 0, MAX_AMOUNT);
        const { rows } = await pool
          .query({ name: 'create_client', text: BANK.create_client, values: [balance] })
          .catch(fail);
        return { status: 200, body: `{"id":${rows[0].id},"balance":${rows[0].balance}}` };
      },
    },
    {
      method: 'POST',
      pattern: '/transaction',
      async handle(req) {
        if (!pool) throw NOT_CONFIGURED;
        const body = await readJsonObject(req);
        const from = intField(body, 'from_client_id', 1, MAX_ID);
        const to = intField(body, 'to_client_id', 1, MAX_ID);
        const amount = intField(body, 'amount', 1, MAX_AMOUNT);
        if (from === to) throw new HttpError(400, 'from_client_id and to_client_id must differ');
        const id = await transfer(pool, from, to, amount).catch(fail);
        return {
          status: 200,
          body: `{"id":${id},"from_client_id":${from},"to_client_id":${to},"amount":${amount}}`,
        };
      },
    },
    {
      method: 'GET',
      pattern: '/client/{id}/balance',
      async handle(req, params) {
        if (!pool) throw NOT_CONFIGURED;
        const id = pathId(params.id, 'id');
        const { rows } = await pool.query({ name: 'balance', text: BANK.balance, values: [id] }).catch(fail);
        if (rows.length === 0) throw new HttpError(404, NOT_FOUND);
        return { status: 200, body: `{"balance":${rows[0].balance}}` };
      },
    },
  ];
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
    const payer = locked.rows[0].id === String(from) ? locked.rows[0] : locked.rows[1];
    if (Number(payer.balance) < amount) {
      await client.query('ROLLBACK');
      throw new HttpError(409, 'insufficient funds');
    }
    const moved = await client.query({
      name: 'transfer',
      text: BANK.transfer,
      values: [amount, from, amount, to, from, to, amount],
    });
    await client.query('COMMIT');
    return moved.rows[0].id;
  } catch (err) {
    if (isUnavailable(err)) {
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

function fail(err) {
  throw asHttpError(err);
}

module.exports = { bankRoutes, transfer };
