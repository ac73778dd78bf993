// want: TestMain
package maint

import "testing"

// A TestMain that takes a *testing.T is an ordinary test.
func TestMain(t *testing.T) {}
