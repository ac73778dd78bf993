'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { badge } = require('../src/badge.js');

test('badge greets', () => {
  assert.match(badge('ada'), /^Hello, /);
});

test('badge names in title case', () => {
  assert.strictEqual(badge('ada lovelace'), 'Hello, Ada Lovelace');
});
