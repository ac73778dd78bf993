package report

import (
	"strings"
	"testing"

	"github.com/patchwright/patchwright/agent/ledger"
)

func readLog(t *testing.T, jsonl string) ledger.Log {
	t.Helper()
	log, err := ledger.Read(strings.NewReader(jsonl))
	if err != nil {
		t.Fatal(err)
	}
	return log
}
