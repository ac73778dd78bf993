'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { less } = require('../js/version.js');

test('older major first', () => {
  assert.strictEqual(less('1.9', '2.0'), true);
});

test('shorter first when equal', () => {
  assert.strictEqual(less('1.2', '1.2.1'), true);
});
