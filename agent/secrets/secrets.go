// Package secrets finds credentials in text with gitleaks' default rules,
// so that a diff carrying one is never committed or pushed and tool output
// carrying one never reaches the model (DESIGN §5): agent/tools withholds
// such output with secret_detected.
//
// A Finding names the file, line and rule, never the secret itself: findings
// end up in logs, comments and pull-request bodies.
package secrets

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/zricethezav/gitleaks/v8/detect"
)

// Finding is one secret found. It deliberately has no field for the secret.
type Finding struct {
	File        string `json:"file"`
	Line        int    `json:"line"`
	RuleID      string `json:"rule"`
	Description string `json:"description"`
}

// String is "file:line: rule (description)".
func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %s (%s)", f.File, f.Line, f.RuleID, f.Description)
}

// Scanner holds the compiled rule set. It is safe for concurrent use.
type Scanner struct {
	det *detect.Detector
}

var (
	defaultOnce    sync.Once
	defaultScanner *Scanner
	defaultErr     error
)

// Default returns the scanner with gitleaks' default configuration. The
// rules are compiled once per process: gitleaks loads them through a global
// viper instance, which is neither cheap nor safe to do concurrently.
func Default() (*Scanner, error) {
	defaultOnce.Do(func() {
		det, err := detect.NewDetectorDefaultConfig()
		if err != nil {
			defaultErr = fmt.Errorf("load gitleaks rules: %w", err)
			return
		}
		defaultScanner = &Scanner{det: det}
	})
	return defaultScanner, defaultErr
}

// Scan returns the secrets in content, attributed to file. Lines are
// 1-based within content.
func (s *Scanner) Scan(file, content string) []Finding {
	return s.ScanContext(context.Background(), file, content)
}

// ScanContext is Scan that stops early when ctx ends. A scan cut short
// may miss findings, so a caller whose context ended must not treat the
// text as clean: it checks ctx.Err() afterwards.
func (s *Scanner) ScanContext(ctx context.Context, file, content string) []Finding {
	if content == "" {
		return nil
	}
	var out []Finding
	//lint:ignore SA1019 DetectContext, the only entry point of gitleaks v8 that takes a context, takes this type.
	for _, f := range s.det.DetectContext(ctx, detect.Fragment{Raw: content}) {
		out = append(out, Finding{
			File:        file,
			Line:        f.StartLine + 1,
			RuleID:      f.RuleID,
			Description: f.Description,
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

// Redact replaces every secret in text with "[REDACTED:rule]" and reports
// how many it replaced. Tool output does not use it: DESIGN §4.4 withholds
// output holding a secret (secret_detected) instead of redacting it and
// carrying on, because a redaction can miss a second copy of the secret
// in another encoding.
func (s *Scanner) Redact(text string) (string, int) {
	found := s.det.DetectString(text)
	n := 0
	for _, f := range found {
		if f.Secret == "" || !strings.Contains(text, f.Secret) {
			continue
		}
		text = strings.ReplaceAll(text, f.Secret, "[REDACTED:"+f.RuleID+"]")
		n++
	}
	return text, n
}

// ScanChange returns the secrets that after has and before did not: those a
// change introduced. A secret that was already in the file is not the
// change's doing and does not block it.
func (s *Scanner) ScanChange(file, before, after string) []Finding {
	old := map[string]bool{}
	for _, f := range s.det.DetectString(before) {
		old[f.RuleID+"\x00"+f.Secret] = true
	}
	var out []Finding
	for _, f := range s.det.DetectString(after) {
		if old[f.RuleID+"\x00"+f.Secret] {
			continue
		}
		out = append(out, Finding{File: file, Line: f.StartLine + 1, RuleID: f.RuleID, Description: f.Description})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}
