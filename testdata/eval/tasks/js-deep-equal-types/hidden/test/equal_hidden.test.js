'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { deepEqual } = require('../src/equal');

test('hidden: arrays are not objects', () => {
  assert.strictEqual(deepEqual([1, 2], { 0: 1, 1: 2 }), false);
  assert.strictEqual(deepEqual({ 0: 1 }, [1]), false);
  assert.strictEqual(deepEqual([[]], [[]]), true);
});

test('hidden: NaN equals NaN', () => {
  assert.strictEqual(deepEqual({ a: NaN }, { a: NaN }), true);
  assert.strictEqual(deepEqual(NaN, NaN), true);
  assert.strictEqual(deepEqual(NaN, 0), false);
});
