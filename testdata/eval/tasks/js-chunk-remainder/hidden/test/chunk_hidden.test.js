'use strict';
const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { chunk } = require('../lib/chunk');

test('hidden: the remainder is kept', () => {
  assert.deepStrictEqual(chunk([1, 2, 3, 4, 5], 2), [[1, 2], [3, 4], [5]]);
  assert.deepStrictEqual(chunk([1, 2], 5), [[1, 2]]);
});

// throwsRangeError calls chunk([1], size) in a child process with a time
// and heap limit: before the fix such a size loops forever, and the test
// must fail rather than hang until the check's timeout.
function throwsRangeError(size) {
  const lib = JSON.stringify(path.join(__dirname, '..', 'lib', 'chunk'));
  const script = `try { require(${lib}).chunk([1], ${size}); } catch (e) { process.exit(e instanceof RangeError ? 3 : 4); }`;
  const r = spawnSync(process.execPath, ['--max-old-space-size=64', '-e', script], { timeout: 10000 });
  return r.status === 3;
}

test('hidden: sizes below one throw', () => {
  assert.ok(throwsRangeError(0), 'chunk([1], 0) throws a RangeError');
  assert.ok(throwsRangeError(-2), 'chunk([1], -2) throws a RangeError');
});
