'use strict';

// Unit tests of the contract's value rules and the router.

const test = require('node:test');
const assert = require('node:assert/strict');
const { codePoints, intField, stringField, pathInt, pathId, HttpError } = require('../lib/http');
const { Router } = require('../lib/router');
const { loadConfig } = require('../lib/config');

function status(fn) {
  try {
    fn();
    return 0;
  } catch (err) {
    assert.ok(err instanceof HttpError, `want an HttpError, got ${err}`);
    return err.status;
  }
}

test('codePoints', () => {
  const cases = [
    ['', 0], // empty
    ['hello', 5], // ASCII
    ['straße', 6], // one BMP letter outside ASCII
    ['😀', 1], // a surrogate pair is one code point
    ['a😀b😀', 4], // pairs among others
    ['\ud800', 1], // a lone high surrogate counts one, as Array.from does
    ['\udc00\ud800', 2], // low then high: no pair
  ];
  for (const [s, want] of cases) {
    assert.equal(codePoints(s), want, JSON.stringify(s));
    assert.equal(codePoints(s), Array.from(s).length, `agrees with Array.from for ${JSON.stringify(s)}`);
  }
});

test('intField follows I-JSON', () => {
  const cases = [
    [{ n: 10 }, 0], // integer
    [JSON.parse('{"n":10.0}'), 0], // 10.0 is 10
    [JSON.parse('{"n":1e1}'), 0], // 1e1 is 10
    [{ n: 10.5 }, 400], // not integral
    [{ n: '10' }, 400], // a string
    [{ n: true }, 400], // a boolean
    [{ n: null }, 400], // null
    [{}, 400], // missing
    [{ n: 0 }, 400], // below the range
    [{ n: 1e12 + 1 }, 400], // above the range
    [JSON.parse('{"n":1e400}'), 400], // Infinity
  ];
  for (const [obj, want] of cases) {
    assert.equal(status(() => intField(obj, 'n', 1, 1e12)), want, JSON.stringify(obj));
  }
});

test('stringField', () => {
  const cases = [
    ['a', 0], // fine
    ['', 400], // empty
    ['a\u0000b', 400], // U+0000
    [1, 400], // not a string
    [undefined, 400], // missing
    ['😀'.repeat(255), 0], // 255 code points in 510 UTF-16 units
    ['😀'.repeat(256), 400], // 256 code points
    ['x'.repeat(256), 400], // 256 ASCII
  ];
  for (const [v, want] of cases) {
    assert.equal(status(() => stringField({ s: v }, 's', 255)), want, JSON.stringify(v));
  }
});

test('path parameters', () => {
  const cases = [
    ['1', 0], // smallest id
    ['9007199254740991', 0], // 2^53-1
    ['9007199254740992', 400], // 2^53
    ['0', 400], // below 1
    ['-1', 400], // sign
    ['1.5', 400], // decimal point
    ['abc', 400], // letters
    ['%2e%2e', 400], // encoded dots
    ['00000000000000001', 400], // 17 digits
    ['0000000000000001', 0], // 16 digits
    ['', 400], // empty
  ];
  for (const [raw, want] of cases) {
    assert.equal(status(() => pathId(raw, 'id')), want, raw);
  }
  assert.equal(pathInt('0', 'balance', 0, 1e12), 0);
});

test('router', () => {
  const r = new Router();
  const h = async () => ({});
  r.add({ method: 'POST', pattern: '/client/new/{balance}', handle: h });
  r.add({ method: 'GET', pattern: '/client/{id}/balance', handle: h });
  r.add({ method: 'POST', pattern: '/uppercase', handle: h });
  const cases = [
    ['POST', '/uppercase', '/uppercase', undefined], // exact route
    ['GET', '/uppercase', null, 'POST'], // wrong method
    ['GET', '/client/12/balance', '/client/{id}/balance', undefined], // parameter
    ['HEAD', '/client/12/balance', '/client/{id}/balance', undefined], // HEAD serves a GET route
    ['GET', '/client/abc/balance', '/client/{id}/balance', undefined], // malformed id reaches the handler (400)
    ['GET', '/client/new/balance', '/client/{id}/balance', undefined], // both patterns match; GET picks one
    ['PUT', '/client/new/balance', null, 'GET, HEAD, POST'], // Allow is the union
    ['GET', '/client/../balance', undefined, undefined], // dot segment: no route
    ['GET', '/client//balance', undefined, undefined], // empty segment: no route
    ['POST', '/uppercase/', undefined, undefined], // trailing slash: no route
    ['GET', '/nope', undefined, undefined], // unknown
  ];
  for (const [method, path, route, allow] of cases) {
    const hit = r.match(method, path);
    if (route === undefined && allow === undefined) {
      assert.equal(hit, null, `${method} ${path}`);
    } else if (route === null) {
      assert.equal(hit.route, undefined, `${method} ${path}`);
      assert.equal(hit.allow, allow, `${method} ${path}`);
    } else {
      assert.equal(hit.route.pattern, route, `${method} ${path}`);
    }
  }
});

test('config', () => {
  const ok = loadConfig({});
  assert.deepEqual(ok.errors, []);
  assert.equal(ok.config.port, 8080);
  assert.equal(ok.config.host, '127.0.0.1');
  assert.equal(ok.config.poolSize, 20);
  assert.equal(ok.config.logRequests, false);
  assert.equal(ok.config.workers, 1);
  const bad = loadConfig({ PORT: 'x', DB_POOL_SIZE: '0', LOG_REQUESTS: 'yes', WORKERS: '-1', DATABASE_URL: 'mysql://a' });
  assert.equal(bad.errors.length, 5, bad.errors.join('\n'));
  assert.ok(loadConfig({ WORKERS: 'auto' }).config.workers >= 1);
  const urls = [
    [{ DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db?sslmode=disable' }, 0], // the contract's form
    [{ DATABASE_URL: 'postgresql://u@h/db' }, 0], // the long scheme
    [{ DATABASE_URL: 'postgres://u@h:99999/db' }, 1], // port out of range: not a URL
    [{ DATABASE_URL: 'mysql://u@h/db' }, 1], // wrong scheme
    [{ MYSQL_URL: 'mysql://u:p@127.0.0.1:3306/db' }, 0], // the contract's form
    [{ MYSQL_URL: 'nope' }, 1], // not a URL
  ];
  for (const [env, want] of urls) {
    const { errors } = loadConfig(env);
    assert.equal(errors.length, want, `${JSON.stringify(env)}: ${errors}`);
    for (const e of errors) assert.doesNotMatch(e, /u:p@/, 'the URL (and its password) is not echoed');
  }
});
