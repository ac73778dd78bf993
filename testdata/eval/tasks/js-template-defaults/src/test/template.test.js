'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { render } = require('../src/template');

test('placeholders', () => {
  assert.strictEqual(render('Hi {{name}}, {{ n }} new', { name: 'Ada', n: 3 }), 'Hi Ada, 3 new');
  assert.strictEqual(render('Hi {{name}}!', {}), 'Hi !');
});
