-- Invariants the harness checks after a run. Each query returns one row.

-- name: money
-- total balances vs total deposits: must be equal.
SELECT (SELECT coalesce(sum(balance), 0) FROM client) AS balances, (SELECT coalesce(sum(amount), 0) FROM transaction WHERE from_client_id IS NULL) AS deposits

-- name: negative
-- clients with a negative balance: must be 0.
SELECT count(*) FROM client WHERE balance < 0

-- name: ledger
-- clients whose balance differs from incoming - outgoing: must be 0.
SELECT count(*) FROM client c LEFT JOIN (SELECT to_client_id AS id, sum(amount) AS v FROM transaction GROUP BY to_client_id) i ON i.id = c.id LEFT JOIN (SELECT from_client_id AS id, sum(amount) AS v FROM transaction WHERE from_client_id IS NOT NULL GROUP BY from_client_id) o ON o.id = c.id WHERE c.balance <> coalesce(i.v, 0) - coalesce(o.v, 0)
