'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { render } = require('../src/template');

test('hidden: defaults fill missing values', () => {
  assert.strictEqual(render('Hello {{name|friend}}', {}), 'Hello friend');
  assert.strictEqual(render('Hello {{ name | dear friend }}!', {}), 'Hello dear friend!');
  assert.strictEqual(render('Hello {{name|friend}}', { name: 'Ada' }), 'Hello Ada');
  assert.strictEqual(render('{{n|none}} left', { n: 0 }), '0 left');
});
