'use strict';

// string: POST /uppercase and POST /count, no database.

const { jsonBodies, text, ERRORS } = require('../http');

const body = { type: 'object', properties: { s: text() }, required: ['s'] };

/** stringRoutes is the string workload as a Fastify plugin. */
async function stringRoutes(app) {
  jsonBodies(app);
  app.post(
    '/uppercase',
    { schema: { body, response: { 200: { type: 'object', properties: { v: { type: 'string' } } }, ...ERRORS } } },
    // toUpperCase is Unicode's full, locale-independent mapping
    // (SpecialCasing included: "ß" -> "SS").
    async (request) => ({ v: request.body.s.toUpperCase() }),
  );
  app.post(
    '/count',
    { schema: { body, response: { 200: { type: 'object', properties: { v: { type: 'integer' } } }, ...ERRORS } } },
    async (request) => ({ v: codePoints(request.body.s) }),
  );
}

/**
 * codePoints counts the Unicode code points of s: its UTF-16 length minus
 * one per surrogate pair (a lone surrogate counts as one, as in Array.from).
 */
function codePoints(s) {
  const len = s.length;
  let n = len;
  for (let i = 0; i < len - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

module.exports = { stringRoutes, codePoints };
