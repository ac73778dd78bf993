// want: TestPlain
package method

import "testing"

type suite struct{}

func (suite) TestMethod(t *testing.T) {}

func TestPlain(t *testing.T) {}
