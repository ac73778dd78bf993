'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { pageLabel } = require('../format.js');

test('labels a page', () => {
  assert.strictEqual(pageLabel(2, 5), 'page 2 of 5');
});
