//go:build integration

// want:
package tagged

import "testing"

func TestIntegration(t *testing.T) {}
