// want: TestÉcole Test1
package unicode

import "testing"

// é is a lower-case letter: not a test.
func Testé(t *testing.T) {}

// É is not.
func TestÉcole(t *testing.T) {}

func Testa(t *testing.T) {}

func Test1(t *testing.T) {}
