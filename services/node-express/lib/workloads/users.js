'use strict';

// users: sign-up on PostgreSQL (workloads/users/README.md).

const { HttpError, objectBody, stringField, pathId } = require('../http');
const { needsDatabase, asHttpError } = require('../db');
const { USERS } = require('../queries');

/** MAX_LENGTH bounds email and password in code points: varchar(255). */
const MAX_LENGTH = 255;

/** usersRoutes registers the users workload's routes on route over pool (null: not configured). */
function usersRoutes(route, json, pool) {
  const configured = needsDatabase(pool);
  route('post', '/user', configured, json, async (req, res) => {
    const body = objectBody(req);
    const email = stringField(body, 'email', MAX_LENGTH);
    if (!email.includes('@')) throw new HttpError(400, 'field "email" must contain @');
    const password = stringField(body, 'password', MAX_LENGTH);
    const { rows } = await pool
      .query({ name: 'create_user', text: USERS.create_user, values: [email, password] })
      .catch(fail);
    const id = rows[0].id;
    res.status(201).location(`/user/${id}`).json({ id, message: 'User created' });
  });
  route('get', '/user/:id', configured, async (req, res) => {
    const id = pathId(req.params.id, 'id');
    const { rows } = await pool.query({ name: 'get_user', text: USERS.get_user, values: [id] }).catch(fail);
    if (rows.length === 0) throw new HttpError(404, 'user not found');
    res.json({ id: rows[0].id, email: rows[0].email });
  });
}

function fail(err) {
  throw asHttpError(err);
}

module.exports = { usersRoutes };
