// want: BenchmarkAdd TestAdd
package bench

import "testing"

func BenchmarkAdd(b *testing.B) {}

func TestAdd(t *testing.T) {}
