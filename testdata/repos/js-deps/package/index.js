'use strict';

// title capitalises the first letter of every word.
function title(s) {
  return s.replace(/\b\w/g, (c) => c.toUpperCase());
}

module.exports = { title };
