'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { chunk } = require('../lib/chunk');

test('hidden: the remainder is kept', () => {
  assert.deepStrictEqual(chunk([1, 2, 3, 4, 5], 2), [[1, 2], [3, 4], [5]]);
  assert.deepStrictEqual(chunk([1, 2], 5), [[1, 2]]);
});

test('hidden: sizes below one throw', () => {
  assert.throws(() => chunk([1], 0), RangeError);
  assert.throws(() => chunk([1], -2), RangeError);
});
