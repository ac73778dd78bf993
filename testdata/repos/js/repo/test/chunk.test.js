'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { chunk, sum } = require('../src/chunk.js');

test('chunk splits evenly', () => {
  assert.deepStrictEqual(chunk([1, 2, 3, 4], 2), [[1, 2], [3, 4]]);
});

test('sum adds', () => {
  assert.strictEqual(sum([1, 2, 3]), 6);
});
