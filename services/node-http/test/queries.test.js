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
    const got = { ...queries[key] };
    for (const name of queries.NOT_YET_IN_QUERIES_SQL) {
      if (!(name in want)) delete got[name]; // not in the contract's file yet: only checked once it is
    }
    assert.deepEqual(got, want);
  });
}
