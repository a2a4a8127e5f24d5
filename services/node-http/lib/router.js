'use strict';

// A small router: patterns like /client/{id}/balance, matched segment by
// segment on the raw (still percent-encoded) path. A parameter matches one
// non-empty segment other than "." and "..", so /client/../balance matches
// no route (404) while /client/%2e%2e/balance reaches the handler, which
// rejects the malformed parameter (400).

/**
 * Router maps a method and a path to a route; the route's pattern doubles
 * as the metrics label.
 */
class Router {
  constructor() {
    this.exact = new Map(); // path without parameters -> {pattern, byMethod}
    this.patterns = []; // {pattern, segments, byMethod}
  }

  /** add registers route {method, pattern, handle}. */
  add(route) {
    let entry = this.exact.get(route.pattern) || this.patterns.find((p) => p.pattern === route.pattern);
    if (!entry) {
      entry = { pattern: route.pattern, byMethod: new Map(), allow: '' };
      if (route.pattern.includes('{')) {
        entry.segments = route.pattern.split('/').map((s) => (s.startsWith('{') ? { param: s.slice(1, -1) } : s));
        this.patterns.push(entry);
      } else {
        this.exact.set(route.pattern, entry);
      }
    }
    if (entry.byMethod.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.pattern}`);
    entry.byMethod.set(route.method, route);
    if (route.method === 'GET') entry.byMethod.set('HEAD', route);
    entry.allow = [...entry.byMethod.keys()].sort().join(', ');
  }

  /**
   * match returns {route, params} for a matching method and path,
   * {pattern, allow} for a known path with another method, or null.
   */
  match(method, path) {
    const entry = this.exact.get(path);
    if (entry) return found(entry, method, undefined);
    const parts = path.split('/');
    let allowed = null;
    for (const p of this.patterns) {
      const params = matchSegments(p.segments, parts);
      if (params === null) continue;
      const hit = found(p, method, params);
      if (hit.route) return hit;
      if (allowed === null) allowed = hit;
      else allowed = { pattern: allowed.pattern, allow: union(allowed.allow, hit.allow) };
    }
    return allowed;
  }
}

function found(entry, method, params) {
  const route = entry.byMethod.get(method);
  if (route) return { route, params };
  return { pattern: entry.pattern, allow: entry.allow };
}

function union(a, b) {
  return [...new Set([...a.split(', '), ...b.split(', ')])].sort().join(', ');
}

function matchSegments(segments, parts) {
  if (segments.length !== parts.length) return null;
  const params = {};
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i];
    const part = parts[i];
    if (typeof seg === 'string') {
      if (seg !== part) return null;
    } else {
      if (part === '' || part === '.' || part === '..') return null;
      params[seg.param] = part;
    }
  }
  return params;
}

module.exports = { Router };
