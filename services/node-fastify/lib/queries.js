'use strict';

// The SQL of workloads/{bank,users,sku}/queries.sql, verbatim (test/queries.test.js
// checks they have not drifted). Each is run as a prepared statement: pg
// statements carry a name so every pooled connection parses them once.

/** BANK holds the bank workload's statements, keyed by their queries.sql name. */
const BANK = {
  create_client:
    'WITH c AS (INSERT INTO client (balance) VALUES ($1) RETURNING id, balance), d AS (INSERT INTO transaction (from_client_id, to_client_id, amount) SELECT NULL, id, balance FROM c WHERE balance > 0) SELECT id, balance FROM c',
  lock_clients: 'SELECT id, balance FROM client WHERE id IN ($1, $2) ORDER BY id FOR UPDATE',
  transfer:
    'WITH debit AS (UPDATE client SET balance = balance - $1 WHERE id = $2), credit AS (UPDATE client SET balance = balance + $3 WHERE id = $4) INSERT INTO transaction (from_client_id, to_client_id, amount) VALUES ($5, $6, $7) RETURNING id',
  balance: 'SELECT balance FROM client WHERE id = $1',
  // Run only after a COMMIT that failed: is the transfer's ledger row there?
  // The id alone is not enough: after a crash, ids handed out by
  // transactions that never committed can be handed out again, so another
  // transfer may hold it; the row must be this transfer's.
  ledger_row: 'SELECT id FROM transaction WHERE id = $1 AND from_client_id = $2 AND to_client_id = $3 AND amount = $4',
};

/** USERS holds the users workload's statements. */
const USERS = {
  create_user: 'INSERT INTO users (email, password) VALUES ($1, $2) RETURNING id',
  get_user: 'SELECT id, email FROM users WHERE id = $1',
};

/** SKU holds the sku workload's statement. */
const SKU = {
  get_sku:
    'SELECT id, mem_id, mem_code, sku_id, sku_code, item, sku_name, sku_abbr FROM purch_sku_master WHERE sku_id = ?',
};

module.exports = { BANK, USERS, SKU };
