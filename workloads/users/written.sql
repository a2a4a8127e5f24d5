-- Rows the requests of the contract write, counted by `showdown run`
-- before and after every measured level and compared with the answers
-- (see workloads/bank/written.sql).

-- name: POST /user 201
-- users signed up.
SELECT count(*) FROM users
