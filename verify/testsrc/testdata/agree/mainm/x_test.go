// want: TestA
package mainm

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(m.Run()) }

func TestA(t *testing.T) {}
