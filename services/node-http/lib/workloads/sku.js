'use strict';

// sku: a read-heavy lookup on MariaDB / MySQL (workloads/sku/README.md).

const { HttpError, pathId } = require('../http');
const { NOT_CONFIGURED, asHttpError } = require('../db');
const { SKU } = require('../queries');

/** skuRoutes returns the sku workload's route over pool (null: not configured). */
function skuRoutes(pool) {
  return [
    {
      method: 'GET',
      pattern: '/sku/{sku_id}',
      async handle(req, params) {
        if (!pool) throw NOT_CONFIGURED;
        const skuId = pathId(params.sku_id, 'sku_id');
        // execute: a server-side prepared statement, cached per connection.
        const [rows] = await pool.execute(SKU.get_sku, [skuId]).catch(fail);
        if (rows.length === 0) throw new HttpError(404, 'sku not found');
        const r = rows[0];
        // BIGINT columns arrive as decimal strings (bigNumberStrings), int as numbers.
        return {
          status: 200,
          body:
            `{"id":${r.id},"mem_id":${r.mem_id},"mem_code":${JSON.stringify(r.mem_code)},` +
            `"sku_id":${r.sku_id},"sku_code":${JSON.stringify(r.sku_code)},"item":${JSON.stringify(r.item)},` +
            `"sku_name":${JSON.stringify(r.sku_name)},"sku_abbr":${JSON.stringify(r.sku_abbr)}}`,
        };
      },
    },
  ];
}

function fail(err) {
  throw asHttpError(err);
}

module.exports = { skuRoutes };
