'use strict';

// users: sign-up on PostgreSQL (workloads/users/README.md).

const { HttpError, jsonBodies, text, DIGITS, ERRORS, pathId } = require('../http');
const { notConfigured, asHttpError } = require('../db');
const { USERS } = require('../queries');

/** MAX_LENGTH bounds email and password in code points: varchar(255). */
const MAX_LENGTH = 255;

const signUp = {
  type: 'object',
  properties: {
    email: { ...text(MAX_LENGTH), allOf: [{ pattern: '@' }] },
    password: text(MAX_LENGTH),
  },
  required: ['email', 'password'],
};

const created = { type: 'object', properties: { id: { type: 'integer' }, message: { type: 'string' } } };
const user = { type: 'object', properties: { id: { type: 'integer' }, email: { type: 'string' } } };

/** usersRoutes is the users workload as a Fastify plugin over opts.pool (null: not configured). */
async function usersRoutes(app, { pool }) {
  // Without its database, every request is 503, before its body is read or checked.
  if (!pool) app.addHook('onRequest', notConfigured);
  jsonBodies(app);
  app.post('/user', { schema: { body: signUp, response: { 201: created, ...ERRORS } } }, async (request, reply) => {
    const { email, password } = request.body;
    const { rows } = await pool
      .query({ name: 'create_user', text: USERS.create_user, values: [email, password] })
      .catch(fail);
    const id = rows[0].id;
    reply.code(201).header('Location', `/user/${id}`);
    return { id, message: 'User created' };
  });
  app.get(
    '/user/:id',
    { schema: { params: { type: 'object', properties: { id: DIGITS } }, response: { 200: user, ...ERRORS } } },
    async (request) => {
      const id = pathId(request.params.id, 'id');
      const { rows } = await pool.query({ name: 'get_user', text: USERS.get_user, values: [id] }).catch(fail);
      if (rows.length === 0) throw new HttpError(404, 'user not found');
      return rows[0];
    },
  );
}

function fail(err) {
  throw asHttpError(err);
}

module.exports = { usersRoutes };
