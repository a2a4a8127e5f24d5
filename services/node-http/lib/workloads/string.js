'use strict';

// string: POST /uppercase and POST /count, no database.

const { readJsonObject, stringField, codePoints } = require('../http');

/** stringRoutes returns the string workload's routes. */
function stringRoutes() {
  return [
    {
      method: 'POST',
      pattern: '/uppercase',
      async handle(req) {
        const s = stringField(await readJsonObject(req), 's');
        // toUpperCase is Unicode's full, locale-independent mapping
        // (SpecialCasing included: "ß" -> "SS").
        return { status: 200, body: JSON.stringify({ v: s.toUpperCase() }) };
      },
    },
    {
      method: 'POST',
      pattern: '/count',
      async handle(req) {
        const s = stringField(await readJsonObject(req), 's');
        return { status: 200, body: `{"v":${codePoints(s)}}` };
      },
    },
  ];
}

module.exports = { stringRoutes };
