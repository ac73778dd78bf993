// want: error
package generic

import "testing"

func TestG[T any](t *testing.T) {}
