// want: TestLinux
package oslinux

import "testing"

func TestLinux(t *testing.T) {}
