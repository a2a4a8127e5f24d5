-- The statements every bank implementation runs, verbatim. Each parameter
-- is used once and in order, so JDBC's ? placeholders map one to one.

-- name: create_client
-- params: balance
WITH c AS (INSERT INTO client (balance) VALUES ($1) RETURNING id, balance), d AS (INSERT INTO transaction (from_client_id, to_client_id, amount) SELECT NULL, id, balance FROM c WHERE balance > 0) SELECT id, balance FROM c

-- name: lock_clients
-- params: from_client_id, to_client_id
SELECT id, balance FROM client WHERE id IN ($1, $2) ORDER BY id FOR UPDATE

-- name: transfer
-- params: amount, from_client_id, amount, to_client_id, from_client_id, to_client_id, amount
WITH debit AS (UPDATE client SET balance = balance - $1 WHERE id = $2), credit AS (UPDATE client SET balance = balance + $3 WHERE id = $4) INSERT INTO transaction (from_client_id, to_client_id, amount) VALUES ($5, $6, $7) RETURNING id

-- name: balance
-- params: id
SELECT balance FROM client WHERE id = $1

-- name: ledger_row
-- params: id, from_client_id, to_client_id, amount
SELECT id FROM transaction WHERE id = $1 AND from_client_id = $2 AND to_client_id = $3 AND amount = $4
