'use strict';

// What every workload shares beyond its schemas: errors with their
// status, path parameters, the JSON body parser of the routes that read a
// body, and the JSON Schema pieces of the contract's value rules.

const { MAX_ID } = require('./config');

/** MAX_BODY is the largest request body accepted: 1 MiB. */
const MAX_BODY = 1048576;

/** MAX_AMOUNT bounds a deposit and a transfer: 10^12. */
const MAX_AMOUNT = 1e12;

/** HttpError is an error answered to the client with its status and message. */
class HttpError extends Error {
  constructor(status, message, headers) {
    super(message);
    this.status = status;
    this.headers = headers;
  }
}

/**
 * NoAnswer ends a request without any answer: the error handler destroys
 * the client's connection instead of writing a response (used when the
 * truth is "unknown").
 */
class NoAnswer extends Error {}

/**
 * jsonBodies makes the routes of the plugin instance read their bodies as
 * JSON, whatever the Content-Type (the contract checks none), up to
 * MAX_BODY (then 413). Fastify's own parser (secure-json-parse) drops
 * __proto__ and constructor keys, unknown fields for the contract. The
 * schemas then decide what the value must be.
 */
function jsonBodies(instance) {
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser(
    '*',
    { parseAs: 'string', bodyLimit: MAX_BODY },
    instance.getDefaultJsonParser('remove', 'remove'),
  );
}

/**
 * discardBodies makes the routes of instance ignore their bodies: they are
 * read and dropped unparsed (POST /client/new/{balance} ignores its body,
 * and a 405 does not depend on it).
 */
function discardBodies(instance) {
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser('*', (request, payload, done) => {
    payload.on('end', () => done(null, undefined));
    payload.on('error', (err) => done(err, undefined));
    payload.resume();
  });
}

// JSON Schema pieces. Fastify compiles them with Ajv (type coercion off:
// "10" and true are not integers here), and serializes answers with
// fast-json-stringify from the response schemas.

/** text is a non-empty string without U+0000; Ajv counts maxLength in code points. */
function text(maxCodePoints) {
  const s = { type: 'string', minLength: 1, pattern: '^[^\\u0000]*$' };
  if (maxCodePoints !== undefined) s.maxLength = maxCodePoints;
  return s;
}

/** integer is an I-JSON integer in min .. max: 10, 10.0 and 1e1 are the same value. */
function integer(min, max) {
  return { type: 'integer', minimum: min, maximum: max };
}

/** ID is an id in the body: 1 .. 2^53-1. */
const ID = integer(1, MAX_ID);

/** DIGITS is a path parameter: 1 to 16 decimal digits (the range is checked by pathInt). */
const DIGITS = { type: 'string', pattern: '^[0-9]{1,16}$' };

/** ERROR is the answer of every error. */
const ERROR = { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] };

/** ERRORS are the error answers of a route's response schema. */
const ERRORS = { '4xx': ERROR, '5xx': ERROR };

/**
 * pathInt returns a path parameter that the schema checked as digits, if
 * it is within min .. max, else throws a 400.
 */
function pathInt(raw, name, min, max) {
  const v = Number(raw);
  if (v < min || v > max) throw new HttpError(400, `path parameter ${name} must be in ${min} .. ${max}`);
  return v;
}

/** pathId reads an id path parameter: 1 .. 2^53-1. */
function pathId(raw, name) {
  return pathInt(raw, name, 1, MAX_ID);
}

module.exports = {
  MAX_BODY,
  MAX_AMOUNT,
  HttpError,
  NoAnswer,
  jsonBodies,
  discardBodies,
  text,
  integer,
  ID,
  DIGITS,
  ERROR,
  ERRORS,
  pathInt,
  pathId,
};
