-- Rows the requests of the contract write, counted by `showdown run`
-- before and after every measured level and compared with the answers
-- (internal/lab, audit.go): each query is named after the request
-- ("METHOD /path", {x} for any segment) and the status that says it was
-- committed. Between the two counts the rows written must be at least the
-- answers with that status and at most those plus the requests that got
-- no answer (or were in flight when the level ended).

-- name: POST /transaction 200
-- transfers in the ledger (a deposit has no payer).
SELECT count(*) FROM transaction WHERE from_client_id IS NOT NULL

-- name: POST /client/new/{balance} 200
-- clients opened.
SELECT count(*) FROM client
