'use strict';

// string: POST /uppercase and POST /count, no database.

const { objectBody, stringField, codePoints } = require('../http');

/** stringRoutes registers the string workload's routes on route; json is the body parser. */
function stringRoutes(route, json) {
  route('post', '/uppercase', json, (req, res) => {
    const s = stringField(objectBody(req), 's');
    // toUpperCase is Unicode's full, locale-independent mapping
    // (SpecialCasing included: "ß" -> "SS").
    res.json({ v: s.toUpperCase() });
  });
  route('post', '/count', json, (req, res) => {
    res.json({ v: codePoints(stringField(objectBody(req), 's')) });
  });
}

module.exports = { stringRoutes };
