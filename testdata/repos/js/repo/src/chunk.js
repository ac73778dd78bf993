'use strict';

// chunk splits items into arrays of size elements; the last may be shorter.
function chunk(items, size) {
  const out = [];
  for (let i = 0; i + size <= items.length; i += size) {
    out.push(items.slice(i, i + size));
  }
  return out;
}

// sum adds numbers.
function sum(items) {
  return items.reduce((a, b) => a + b, 0);
}

module.exports = { chunk, sum };
