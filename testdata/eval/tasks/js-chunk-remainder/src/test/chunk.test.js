'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { chunk } = require('../lib/chunk');

test('even split', () => {
  assert.deepStrictEqual(chunk([1, 2, 3, 4], 2), [[1, 2], [3, 4]]);
  assert.deepStrictEqual(chunk([], 3), []);
});
