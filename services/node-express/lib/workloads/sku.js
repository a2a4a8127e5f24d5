'use strict';

// sku: a read-heavy lookup on MariaDB / MySQL (workloads/sku/README.md).

const { HttpError, pathId } = require('../http');
const { needsDatabase, asHttpError } = require('../db');
const { SKU } = require('../queries');

/** skuRoutes registers the sku workload's route on route over pool (null: not configured). */
function skuRoutes(route, pool) {
  const configured = needsDatabase(pool);
  route('get', '/sku/:sku_id', configured, async (req, res) => {
    const skuId = pathId(req.params.sku_id, 'sku_id');
    // execute: a server-side prepared statement, cached per connection.
    const [rows] = await pool.execute(SKU.get_sku, [skuId]).catch(fail);
    if (rows.length === 0) throw new HttpError(404, 'sku not found');
    const r = rows[0];
    res.json({
      id: r.id,
      mem_id: r.mem_id,
      mem_code: r.mem_code,
      sku_id: r.sku_id,
      sku_code: r.sku_code,
      item: r.item,
      sku_name: r.sku_name,
      sku_abbr: r.sku_abbr,
    });
  });
}

function fail(err) {
  throw asHttpError(err);
}

module.exports = { skuRoutes };
