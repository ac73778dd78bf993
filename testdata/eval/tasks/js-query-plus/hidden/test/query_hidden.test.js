'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { parseQuery } = require('../src/query');

test('hidden: form encoding is decoded', () => {
  assert.deepStrictEqual(parseQuery('q=hello+world&city=S%C3%A3o%20Paulo'), { q: 'hello world', city: 'São Paulo' });
  assert.deepStrictEqual(parseQuery('full+name=Ada+L'), { 'full name': 'Ada L' });
});

test('hidden: malformed escapes are kept', () => {
  assert.deepStrictEqual(parseQuery('x=100%zz'), { x: '100%zz' });
});
