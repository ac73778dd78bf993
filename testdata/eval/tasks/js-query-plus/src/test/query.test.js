'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { parseQuery } = require('../src/query');

test('plain pairs', () => {
  assert.deepStrictEqual(parseQuery('?a=1&b=2&flag'), { a: '1', b: '2', flag: '' });
});
