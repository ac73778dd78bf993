package provider

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	tests := map[string]struct {
		header http.Header
		want   time.Duration
	}{
		"none":             {header: http.Header{}, want: 0},
		"nil":              {header: nil, want: 0},
		"seconds":          {header: http.Header{"Retry-After": {"3"}}, want: 3 * time.Second},
		"fractional":       {header: http.Header{"Retry-After": {"0.5"}}, want: 500 * time.Millisecond},
		"ms wins":          {header: http.Header{"Retry-After": {"3"}, "Retry-After-Ms": {"250"}}, want: 250 * time.Millisecond},
		"garbage":          {header: http.Header{"Retry-After": {"soon"}}, want: 0},
		"negative":         {header: http.Header{"Retry-After": {"-4"}}, want: 0},
		"date in the past": {header: http.Header{"Retry-After": {"Wed, 21 Oct 2015 07:28:00 GMT"}}, want: 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := retryAfter(tc.header); got != tc.want {
				t.Errorf("retryAfter = %v, want %v", got, tc.want)
			}
		})
	}
	future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	if got := retryAfter(http.Header{"Retry-After": {future}}); got < 58*time.Minute || got > time.Hour {
		t.Errorf("date an hour ahead = %v", got)
	}
}

func TestBackoff(t *testing.T) {
	r := Retry{BaseDelay: time.Second, MaxDelay: 10 * time.Second}
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 5: 10 * time.Second, 100: 10 * time.Second} {
		for range 50 {
			got := r.backoff(n, 0)
			if got < want/2 || got > want {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", n, got, want/2, want)
			}
		}
	}
	if got := r.backoff(1, 7*time.Second); got != 7*time.Second {
		t.Errorf("server wait not honoured: %v", got)
	}
}

func TestRetryLimits(t *testing.T) {
	transient := &Error{Kind: KindTransient, Provider: "x", Reason: "boom"}
	tests := map[string]struct {
		retry     Retry
		err       *Error
		wantCalls int
	}{
		"default retries":           {retry: Retry{}, err: transient, wantCalls: DefaultMaxRetries + 1},
		"no retries":                {retry: Retry{MaxRetries: -1}, err: transient, wantCalls: 1},
		"two retries":               {retry: Retry{MaxRetries: 2}, err: transient, wantCalls: 3},
		"permanent is not retried":  {retry: Retry{}, err: &Error{Kind: KindPermanent}, wantCalls: 1},
		"context length not either": {retry: Retry{}, err: &Error{Kind: KindContextLength}, wantCalls: 1},
		"server wait over the cap":  {retry: Retry{MaxDelay: time.Second}, err: &Error{Kind: KindTransient, RetryAfter: 2 * time.Second}, wantCalls: 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			calls := 0
			tc.retry.Sleep = func(context.Context, time.Duration) error { return nil }
			_, err := tc.retry.do(context.Background(), slog.New(slog.DiscardHandler), func(context.Context) (*Response, error) {
				calls++
				e := *tc.err
				return nil, &e
			})
			var pe *Error
			if !errors.As(err, &pe) || pe.Attempts != tc.wantCalls || calls != tc.wantCalls {
				t.Errorf("calls = %d, err = %v; want %d calls", calls, err, tc.wantCalls)
			}
		})
	}
}

func TestRetrySleepCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := Retry{BaseDelay: time.Hour} // the real timer: must return at once on a done context
	_, err := r.do(ctx, slog.New(slog.DiscardHandler), func(context.Context) (*Response, error) {
		return nil, &Error{Kind: KindTransient, Provider: "x"}
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	var pe *Error
	if !errors.As(err, &pe) {
		t.Errorf("the service error is lost: %v", err)
	}
}

func TestClassify(t *testing.T) {
	tests := map[string]struct {
		f    apiFailure
		want Kind
	}{
		"quota 429":            {apiFailure{status: 429, code: "insufficient_quota"}, KindPermanent},
		"rate 429":             {apiFailure{status: 429, code: "rate_limit_exceeded"}, KindTransient},
		"429 without body":     {apiFailure{status: 429}, KindTransient},
		"529":                  {apiFailure{status: 529, code: "overloaded_error"}, KindTransient},
		"500":                  {apiFailure{status: 500}, KindTransient},
		"408":                  {apiFailure{status: 408}, KindTransient},
		"401":                  {apiFailure{status: 401}, KindPermanent},
		"403":                  {apiFailure{status: 403, code: "permission_error"}, KindPermanent},
		"404":                  {apiFailure{status: 404}, KindPermanent},
		"400":                  {apiFailure{status: 400, code: "invalid_request_error"}, KindPermanent},
		"413 too large":        {apiFailure{status: 413, code: "request_too_large"}, KindContextLength},
		"openai context":       {apiFailure{status: 400, code: "context_length_exceeded"}, KindContextLength},
		"anthropic context":    {apiFailure{status: 400, code: "invalid_request_error", message: "input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000"}, KindContextLength},
		"anthropic low credit": {apiFailure{status: 400, code: "invalid_request_error", message: "Your credit balance is too low to access the Anthropic API."}, KindPermanent},
		"stream api_error":     {apiFailure{status: 200, code: "api_error"}, KindTransient},
		"stream unknown error": {apiFailure{status: 200, code: "something_new"}, KindTransient},
		"unknown 4xx":          {apiFailure{status: 422}, KindPermanent},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := classify(tc.f); got.Kind != tc.want || got.Reason == "" {
				t.Errorf("classify = %+v, want kind %s", got, tc.want)
			}
		})
	}
	long := classify(apiFailure{status: 400, message: strings.Repeat("word\n", 200)})
	if strings.Contains(long.Reason, "\n") || len(long.Reason) > maxReasonLen+100 {
		t.Errorf("reason not one bounded line: %q", long.Reason)
	}
}

func TestCost(t *testing.T) {
	u := Usage{InputTokens: 1_000_000, CachedInputTokens: 400_000, CacheWriteTokens: 100_000, OutputTokens: 200_000}
	// 500k plain * 3 + 400k * 0.3 + 100k * 3.75 + 200k * 15, per million.
	want := 0.5*3 + 0.4*0.3 + 0.1*3.75 + 0.2*15
	for _, model := range []string{"anthropic:claude-sonnet-4-5", "anthropic:claude-sonnet-4-5-20250929", "anthropic:claude-sonnet-4-5-latest"} {
		got, known := Cost(model, u)
		if !known || got < want-1e-9 || got > want+1e-9 {
			t.Errorf("Cost(%s) = %v %v, want %v", model, got, known, want)
		}
	}
	if got, known := Cost("openai:gpt-4o-2024-08-06", Usage{InputTokens: 1_000_000}); !known || got != 2.5 {
		t.Errorf("dated OpenAI model = %v %v", got, known)
	}
	for _, model := range []string{"openai:my-finetune", "gpt-4.1", "anthropic:claude-sonnet-4-5x", ""} {
		if got, known := Cost(model, u); known || got != 0 {
			t.Errorf("Cost(%q) = %v %v, want unknown", model, got, known)
		}
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadPrices(t *testing.T) {
	path := writeFile(t, `{"openai:gpt-4.1": {"input": 1, "output": 4, "cached_input": 0.25},
		"openai:qwen2.5-coder:7b": {"input": 0, "output": 0}}`)
	p, err := LoadPrices(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := p["openai:gpt-4.1"]; got != (Price{Input: 1, CachedInput: 0.25, CacheWrite: 1, Output: 4, Images: true}) {
		t.Errorf("override = %+v (cache_write defaults to input, images to the table's)", got)
	}
	if got, known := p.Cost("openai:qwen2.5-coder:7b", Usage{InputTokens: 5000, OutputTokens: 10}); !known || got != 0 {
		t.Errorf("free local model = %v %v", got, known)
	}
	if _, ok := p["anthropic:claude-sonnet-4-5"]; !ok {
		t.Errorf("built-in prices lost")
	}
	if _, known := Cost("openai:qwen2.5-coder:7b", Usage{}); known {
		t.Errorf("loading a file changed the built-in table")
	}

	fromEnv, err := PricesFromEnv(func(k string) string {
		if k == EnvPrices {
			return path
		}
		return ""
	})
	if err != nil || fromEnv["openai:gpt-4.1"].Input != 1 {
		t.Errorf("PricesFromEnv = %v, %v", fromEnv["openai:gpt-4.1"], err)
	}
	if def, err := PricesFromEnv(func(string) string { return "" }); err != nil || len(def) != len(DefaultPrices()) {
		t.Errorf("unset PATCHWRIGHT_PRICES = %d prices, %v", len(def), err)
	}
}

func TestLoadPricesBadInput(t *testing.T) {
	tests := map[string]struct {
		content string
		wantErr string
	}{
		"not JSON":             {`{`, "unexpected EOF"},
		"unknown field":        {`{"openai:x": {"input": 1, "output": 2, "cahced_input": 1}}`, `unknown field "cahced_input"`},
		"missing output":       {`{"openai:x": {"input": 1}}`, "input and output prices are required"},
		"negative":             {`{"openai:x": {"input": -1, "output": 2}}`, "cannot be negative"},
		"key without provider": {`{"gpt-4.1": {"input": 1, "output": 2}}`, "want a provider:model key"},
		"wrong type":           {`{"openai:x": {"input": "1", "output": 2}}`, "cannot unmarshal"},
		"images without price": {`{"openai:local-vl": {"images": true}}`, "images is set but the model has no price"},
		"empty entry":          {`{"openai:x": {}}`, "input and output prices are required"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := LoadPrices(writeFile(t, tc.content))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
	if _, err := LoadPrices(filepath.Join(t.TempDir(), "missing.json")); err == nil || !strings.Contains(err.Error(), "read prices") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := PricesFromEnv(func(string) string { return "/nonexistent/prices.json" }); err == nil || !strings.Contains(err.Error(), EnvPrices) {
		t.Errorf("env error does not name %s: %v", EnvPrices, err)
	}
}

func TestReadsImages(t *testing.T) {
	p, err := LoadPrices(writeFile(t, `{"openai:qwen2.5-vl:7b": {"input": 0, "output": 0, "images": true},
		"openai:qwen2.5-coder:7b": {"input": 0, "output": 0},
		"openai:gpt-4o": {"images": false},
		"anthropic:claude-3-5-haiku": {"images": true, "context_window": 200000}}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]bool{
		"openai:gpt-4.1":                          true,
		"anthropic:claude-sonnet-4-5-20250929":    true, // a dated snapshot reads as its name
		"openai:qwen2.5-vl:7b":                    true,
		"openai:qwen2.5-coder:7b":                 false,
		"openai:gpt-4o":                           false, // the file turned it off
		"anthropic:claude-3-5-haiku":              true,  // and this one on
		"openai:unknown-model":                    false,
		"openai:gpt-4.1,openai:gpt-4.1-mini":      true,
		"openai:gpt-4.1, openai:qwen2.5-coder:7b": false, // a fallback may move the run to it
		"": false,
	}
	for models, want := range cases {
		if got := p.ReadsImages(models); got != want {
			t.Errorf("ReadsImages(%q) = %v, want %v", models, got, want)
		}
	}
	if _, known := p.Cost("openai:gpt-4o", Usage{InputTokens: 1}); !known {
		t.Error("an images-only entry lost the model's price")
	}
}

func TestErrorString(t *testing.T) {
	e := &Error{Kind: KindPermanent, Provider: "openai", StatusCode: 429, Code: "insufficient_quota", Reason: "no quota", Attempts: 1}
	if got := e.Error(); got != "openai: 429 insufficient_quota: no quota" {
		t.Errorf("Error() = %q", got)
	}
	e = &Error{Kind: KindTransient, Provider: "anthropic", Code: "connection_error", Reason: "no response", Attempts: 5, Err: errors.New("EOF")}
	if got := e.Error(); got != "anthropic connection_error: no response (after 5 attempts)" || !errors.Is(e, e.Err) {
		t.Errorf("Error() = %q", got)
	}
}
