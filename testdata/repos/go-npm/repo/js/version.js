'use strict';

// less reports whether version a comes before b ("1.2" < "1.10"), like
// version.Less in Go.
function less(a, b) {
  const pa = a.split('.');
  const pb = b.split('.');
  for (let i = 0; i < pa.length && i < pb.length; i++) {
    if (pa[i] !== pb[i]) {
      return pa[i] < pb[i];
    }
  }
  return pa.length < pb.length;
}

module.exports = { less };
