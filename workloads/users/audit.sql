-- name: rows
-- rows in users: must equal the number of 201 answers of the run.
SELECT count(*) FROM users
