'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { deepEqual } = require('../src/equal');

test('structures', () => {
  assert.strictEqual(deepEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }), true);
  assert.strictEqual(deepEqual({ a: 1 }, { a: 2 }), false);
  assert.strictEqual(deepEqual(null, {}), false);
});
