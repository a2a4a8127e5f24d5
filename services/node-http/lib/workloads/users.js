'use strict';

// users: sign-up on PostgreSQL (workloads/users/README.md).

const { HttpError, readJsonObject, stringField, pathId } = require('../http');
const { NOT_CONFIGURED, asHttpError } = require('../db');
const { USERS } = require('../queries');

/** MAX_LENGTH bounds email and password in code points: varchar(255). */
const MAX_LENGTH = 255;

/** usersRoutes returns the users workload's routes over pool (null: not configured). */
function usersRoutes(pool) {
  return [
    {
      method: 'POST',
      pattern: '/user',
      async handle(req) {
        if (!pool) throw NOT_CONFIGURED;
        const body = await readJsonObject(req);
        const email = stringField(body, 'email', MAX_LENGTH);
        if (!email.includes('@')) throw new HttpError(400, 'field "email" must contain @');
        const password = stringField(body, 'password', MAX_LENGTH);
        const { rows } = await pool
          .query({ name: 'create_user', text: USERS.create_user, values: [email, password] })
          .catch(fail);
        const id = rows[0].id;
        return {
          status: 201,
          body: `{"id":${id},"message":"User created"}`,
          headers: { Location: `/user/${id}` },
        };
      },
    },
    {
      method: 'GET',
      pattern: '/user/{id}',
      async handle(req, params) {
        if (!pool) throw NOT_CONFIGURED;
        const id = pathId(params.id, 'id');
        const { rows } = await pool.query({ name: 'get_user', text: USERS.get_user, values: [id] }).catch(fail);
        if (rows.length === 0) throw new HttpError(404, 'user not found');
        return { status: 200, body: `{"id":${rows[0].id},"email":${JSON.stringify(rows[0].email)}}` };
      },
    },
  ];
}

function fail(err) {
  throw asHttpError(err);
}

module.exports = { usersRoutes };
