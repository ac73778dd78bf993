'use strict';

// badge is the text of a name badge.
function badge(name) {
  return 'Hello, ' + name;
}

module.exports = { badge };
