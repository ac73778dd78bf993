// want:
package oswindows

import "testing"

func TestWindows(t *testing.T) {}
