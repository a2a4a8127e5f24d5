'use strict';

// sku: a read-heavy lookup on MariaDB / MySQL (workloads/sku/README.md).

const { HttpError, DIGITS, ERRORS, pathId } = require('../http');
const { notConfigured, asHttpError } = require('../db');
const { SKU } = require('../queries');

const row = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    mem_id: { type: 'integer' },
    mem_code: { type: 'string' },
    sku_id: { type: 'integer' },
    sku_code: { type: 'string' },
    item: { type: 'string' },
    sku_name: { type: 'string' },
    sku_abbr: { type: 'string' },
  },
};

/** skuRoutes is the sku workload as a Fastify plugin over opts.pool (null: not configured). */
async function skuRoutes(app, { pool }) {
  // Without its database, every request is 503, before its body is read or checked.
  if (!pool) app.addHook('onRequest', notConfigured);
  app.get(
    '/sku/:sku_id',
    { schema: { params: { type: 'object', properties: { sku_id: DIGITS } }, response: { 200: row, ...ERRORS } } },
    async (request) => {
      const skuId = pathId(request.params.sku_id, 'sku_id');
      // execute: a server-side prepared statement, cached per connection.
      const [rows] = await pool.execute(SKU.get_sku, [skuId]).catch(fail);
      if (rows.length === 0) throw new HttpError(404, 'sku not found');
      return rows[0]; // the response schema writes exactly its fields
    },
  );
}

function fail(err) {
  throw asHttpError(err);
}

module.exports = { skuRoutes };
