// want: Test_x Test
package under

import "testing"

func Test_x(t *testing.T) {}

func Test(t *testing.T) {}
