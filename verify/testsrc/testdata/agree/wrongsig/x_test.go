// want: error
package wrongsig

import "testing"

func TestBad(b *testing.B) {}
