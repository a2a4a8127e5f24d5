'use strict';

// The SQL in lib/queries.js must be workloads/*/queries.sql, verbatim.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const queries = require('../lib/queries');

const workloads = path.join(__dirname, '..', '..', '..', 'workloads');

function parse(file) {
  const out = {};
  let name = null;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^-- name: (\S+)/.exec(line);
    if (m) name = m[1];
    else if (name && line.trim() !== '' && !line.startsWith('--')) {
      out[name] = (out[name] ? out[name] + ' ' : '') + line.trim();
    }
  }
  return out;
}

for (const [workload, key] of [['bank', 'BANK'], ['users', 'USERS'], ['sku', 'SKU']]) {
  test(`${workload} queries are verbatim`, { skip: !fs.existsSync(workloads) && 'not in the showdown tree' }, () => {
    const want = parse(path.join(workloads, workload, 'queries.sql'));
    assert.deepEqual({ ...queries[key] }, want);
  });
}
