'use strict';

// pageLabel is the label of page n of total.
function pageLabel(n, total) {
  return `page ${n} of ${total}`;
}

module.exports = { pageLabel };
