-- The statements every users implementation runs, verbatim.

-- name: create_user
-- params: email, password
INSERT INTO users (email, password) VALUES ($1, $2) RETURNING id

-- name: get_user
-- params: id
SELECT id, email FROM users WHERE id = $1
