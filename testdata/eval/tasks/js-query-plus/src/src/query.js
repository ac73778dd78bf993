'use strict';

// parseQuery turns "a=1&b=2" into {a: "1", b: "2"}. A key without "=" gets
// the empty string; a repeated key keeps its last value.
function parseQuery(qs) {
  const out = {};
  if (qs.startsWith('?')) qs = qs.slice(1);
  for (const part of qs.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const key = eq < 0 ? part : part.slice(0, eq);
    const value = eq < 0 ? '' : part.slice(eq + 1);
    out[key] = value;
  }
  return out;
}

module.exports = { parseQuery };
