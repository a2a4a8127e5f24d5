'use strict';

// End-to-end tests of the real process (node server.js) without databases:
// the string workload, the common errors, metrics, the request log and
// SIGTERM. The database workloads are checked by `showdown verify`.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const net = require('node:net');
const path = require('node:path');

const SERVER = path.join(__dirname, '..', 'server.js');

// start runs the server on a free port and resolves with {base, child, stdout()}.
function start(env) {
  const child = spawn(process.execPath, [SERVER], {
    env: { PATH: process.env.PATH, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "listening" line within 30 s; stderr: ${err}`)), 30000);
    child.stderr.on('data', (d) => {
      err += d;
      const m = /listening on [^ ]+:(\d+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ base: `http://127.0.0.1:${m[1]}`, child, stdout: () => out });
      }
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}: ${err}`)));
  });
}

function stop(child) {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.on('exit', (code, signal) => resolve({ code, signal }));
    child.kill('SIGTERM');
  });
}

async function call(base, method, p, body) {
  const res = await fetch(base + p, { method, body });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

// rawRequest writes raw to the server and resolves with the first answer.
function rawRequest(port, raw) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(raw));
    let got = '';
    socket.on('data', (d) => {
      got += d;
      const end = got.indexOf('\r\n\r\n');
      const len = /Content-Length: (\d+)/i.exec(got);
      if (end !== -1 && len && got.length >= end + 4 + Number(len[1])) {
        socket.destroy();
        resolve(got);
      }
    });
    socket.on('error', reject);
    socket.setTimeout(10000, () => reject(new Error(`no answer to ${JSON.stringify(raw)}`)));
  });
}

test('string workload, errors, metrics, SIGTERM', async (t) => {
  const { base, child } = await start({});
  t.after(() => child.kill('SIGKILL'));
  const cases = [
    // [method, path, body, status, body wanted (exact, or a RegExp)]
    ['POST', '/uppercase', '{"s":"straße ǆ"}', 200, '{"v":"STRASSE Ǆ"}'], // full mapping
    ['POST', '/count', '{"s":"😀a"}', 200, '{"v":2}'], // code points
    ['POST', '/count', '{"s":"a","s":"abc"}', 200, '{"v":3}'], // duplicate key: the last wins
    ['POST', '/count', '{"s":"a","x":[1,{}]}', 200, '{"v":1}'], // unknown fields ignored
    ['POST', '/count', '{"s":""}', 400, /"error"/], // empty
    ['POST', '/count', '{"s":"a\\u0000"}', 400, /"error"/], // U+0000
    ['POST', '/count', '{"s":1}', 400, /"error"/], // wrong type
    ['POST', '/count', '{"s":"10","s":10}', 400, /"error"/], // duplicate key: the last, a number, wins
    ['POST', '/count', '[]', 400, /"error"/], // not an object
    ['POST', '/count', 'null', 400, /"error"/], // null
    ['POST', '/count', '{"s":', 400, /malformed JSON/], // truncated
    ['POST', '/count', '', 400, /"error"/], // empty body
    ['POST', '/client/new/5', 'not json', 503, '{"error":"database not configured"}'], // a body the route ignores
    ['GET', '/client/../balance', undefined, 404, /"error"/], // a dot segment matches no route
    ['POST', '/uppercase/', '{"s":"a"}', 404, /"error"/], // trailing slash
    ['POST', '/UPPERCASE', '{"s":"a"}', 404, /"error"/], // case differs
    ['GET', '/count', undefined, 405, /not allowed/], // wrong method
    ['GET', '/nope', undefined, 404, /"error"/], // unknown path
    ['GET', '/client/1/balance', undefined, 503, '{"error":"database not configured"}'], // bank without DATABASE_URL
    ['POST', '/user', '{}', 503, '{"error":"database not configured"}'], // users without DATABASE_URL
    ['GET', '/sku/1', undefined, 503, '{"error":"database not configured"}'], // sku without MYSQL_URL
    ['GET', '/health', undefined, 200, '{"status":"ok"}'], // no database to ping
  ];
  for (const [method, p, body, status, want] of cases) {
    const got = await call(base, method, p, body);
    assert.equal(got.status, status, `${method} ${p} ${body}: ${got.text}`);
    assert.match(got.headers.get('content-type'), /^application\/json/, `${method} ${p}`);
    if (want instanceof RegExp) assert.match(got.text, want, `${method} ${p} ${body}`);
    else assert.equal(got.text, want, `${method} ${p} ${body}`);
  }

  const allow = await call(base, 'DELETE', '/uppercase');
  assert.equal(allow.headers.get('allow'), 'POST');
  const allowGet = await call(base, 'PUT', '/user/1');
  assert.equal(allowGet.headers.get('allow'), 'GET, HEAD');

  const big = await call(base, 'POST', '/uppercase', `{"s":"${'a'.repeat(1 << 20)}"}`);
  assert.equal(big.status, 413);
  const exact = await call(base, 'POST', '/count', `{"s":"${'a'.repeat((1 << 20) - 8)}"}`);
  assert.equal(exact.status, 200, 'a body of exactly 1 MiB is accepted');

  // A request Node's parser refuses still gets JSON.
  const garbage = await rawRequest(new URL(base).port, 'GARBAGE\r\n\r\n');
  assert.match(garbage, /^HTTP\/1.1 400 /);
  assert.match(garbage, /\r\nContent-Type: application\/json\r\n/);
  assert.match(garbage, /\r\n\r\n\{"error":"[^"]+"/);

  const metrics = await call(base, 'GET', '/metrics');
  assert.equal(metrics.status, 200);
  assert.match(metrics.text, /^http_requests_total\{route="\/count",status="200"\} 4$/m);
  assert.match(metrics.text, /^http_requests_total\{route="unmatched",status="404"\} 4$/m);
  assert.match(metrics.text, /^http_requests_total\{route="\/client\/new\/\{balance\}",status="503"\} 1$/m);
  assert.match(metrics.text, /^http_request_duration_seconds_count\{route="\/uppercase"\} \d+$/m);

  assert.deepEqual(await stop(child), { code: 0, signal: null });
});

test('LOG_REQUESTS=true logs one JSON line per request; false logs none', async () => {
  for (const enabled of [true, false]) {
    const { base, child, stdout } = await start({ LOG_REQUESTS: String(enabled) });
    await call(base, 'POST', '/count?x=1', '{"s":"abc"}');
    await call(base, 'GET', '/nope');
    assert.deepEqual(await stop(child), { code: 0, signal: null });
    const lines = stdout().split('\n').filter((l) => l !== '');
    if (!enabled) {
      assert.deepEqual(lines, []);
      continue;
    }
    assert.equal(lines.length, 2, stdout());
    const first = JSON.parse(lines[0]);
    assert.equal(first.method, 'POST');
    assert.equal(first.path, '/count');
    assert.equal(first.status, 200);
    assert.equal(typeof first.duration_ms, 'number');
    assert.equal(JSON.parse(lines[1]).status, 404);
  }
});

test('WORKERS=2 serves and aggregates metrics over the workers', async () => {
  const { base, child } = await start({ WORKERS: '2' });
  for (let i = 0; i < 6; i++) await call(base, 'POST', '/count', '{"s":"abc"}');
  const metrics = await call(base, 'GET', '/metrics');
  assert.equal(metrics.status, 200, metrics.text);
  assert.match(metrics.text, /^http_requests_total\{route="\/count",status="200"\} 6$/m);
  assert.deepEqual(await stop(child), { code: 0, signal: null });
});

test('a bad environment is refused with every mistake listed', async () => {
  const child = spawn(process.execPath, [SERVER], {
    env: { PATH: process.env.PATH, PORT: 'x', DB_POOL_SIZE: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  assert.equal(code, 2);
  assert.match(err, /PORT="x"/);
  assert.match(err, /DB_POOL_SIZE="0"/);
});
