'use strict';

// The contract's value rules shared by every workload: errors with their
// status, the JSON object body, I-JSON integers, path parameters, strings.

const { MAX_ID } = require('./config');

/** MAX_BODY is the largest request body accepted: 1 MiB. */
const MAX_BODY = 1048576;

/** HttpError is an error answered to the client with its status and message. */
class HttpError extends Error {
  constructor(status, message, headers) {
    super(message);
    this.status = status;
    this.headers = headers;
  }
}

/**
 * NoAnswer ends a request without any answer: the app destroys the
 * client's connection instead of writing a response (used when the truth
 * is "unknown").
 */
class NoAnswer extends Error {}

/**
 * objectBody returns the parsed request body if it is a JSON object;
 * anything else (an array, a string, null, no body at all) is a 400.
 * express.json (strict) has already refused what is not JSON.
 */
function objectBody(req) {
  const value = req.body;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new HttpError(400, 'the body must be a JSON object');
  }
  return value;
}

/**
 * intField returns obj[name] if it is an integral JSON number in min .. max
 * (I-JSON: 10, 10.0 and 1e1 are the same value), else throws a 400.
 */
function intField(obj, name, min, max) {
  const v = obj[name];
  if (v === undefined) throw new HttpError(400, `missing field "${name}"`);
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    throw new HttpError(400, `field "${name}" must be an integer`);
  }
  if (v < min || v > max) {
    throw new HttpError(400, `field "${name}" must be in ${min} .. ${max}`);
  }
  return v;
}

/**
 * stringField returns obj[name] if it is a non-empty string of at most
 * maxCodePoints code points without U+0000, else throws a 400.
 */
function stringField(obj, name, maxCodePoints) {
  const v = obj[name];
  if (v === undefined) throw new HttpError(400, `missing field "${name}"`);
  if (typeof v !== 'string') throw new HttpError(400, `field "${name}" must be a string`);
  if (v.length === 0) throw new HttpError(400, `field "${name}" must not be empty`);
  if (v.includes('\u0000')) throw new HttpError(400, `field "${name}" must not contain U+0000`);
  // A string has at least length/2 code points: count only when it matters.
  if (maxCodePoints !== undefined && v.length > maxCodePoints && codePoints(v) > maxCodePoints) {
    throw new HttpError(400, `field "${name}" must be at most ${maxCodePoints} characters`);
  }
  return v;
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

const DIGITS = /^[0-9]{1,16}$/;

/**
 * pathInt parses a path parameter: 1 to 16 decimal digits within
 * min .. max, else a 400.
 */
function pathInt(raw, name, min, max) {
  if (!DIGITS.test(raw)) {
    throw new HttpError(400, `path parameter ${name} must be 1 to 16 decimal digits`);
  }
  const v = Number(raw);
  if (v < min || v > max) throw new HttpError(400, `path parameter ${name} must be in ${min} .. ${max}`);
  return v;
}

/** pathId parses an id path parameter: 1 .. 2^53-1. */
function pathId(raw, name) {
  return pathInt(raw, name, 1, MAX_ID);
}

module.exports = {
  MAX_BODY,
  HttpError,
  NoAnswer,
  objectBody,
  intField,
  stringField,
  codePoints,
  pathInt,
  pathId,
};
