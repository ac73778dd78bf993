package provider

import (
	"fmt"
	"maps"
	"os"
	"strconv"
	"strings"
)

// EnvContextWindow, when set, is the context window in tokens of
// whichever model runs, over the table and the prices file: for a local
// model served with a window of its own (vLLM's --max-model-len,
// Ollama's num_ctx).
const EnvContextWindow = "PATCHWRIGHT_CONTEXT_WINDOW"

// Window is a model's context window and the most tokens one reply may
// have, both in tokens; zero is unknown.
type Window struct {
	Context int64 `json:"context_window"`
	Output  int64 `json:"max_output_tokens"`
}

// Windows maps "provider:model" to its window.
type Windows map[string]Window

// defaultWindows are the windows and output limits the vendors publish
// for their standard tier (beta extensions such as Anthropic's 1M-token
// window are opt-in and not assumed). A model not listed gets the
// agent's default window; operators add theirs in PATCHWRIGHT_PRICES's
// file or set PATCHWRIGHT_CONTEXT_WINDOW.
var defaultWindows = Windows{
	"openai:gpt-5":                {Context: 400_000, Output: 128_000},
	"openai:gpt-5-mini":           {Context: 400_000, Output: 128_000},
	"openai:gpt-4.1":              {Context: 1_047_576, Output: 32_768},
	"openai:gpt-4.1-mini":         {Context: 1_047_576, Output: 32_768},
	"openai:gpt-4.1-nano":         {Context: 1_047_576, Output: 32_768},
	"openai:gpt-4o":               {Context: 128_000, Output: 16_384},
	"openai:gpt-4o-mini":          {Context: 128_000, Output: 16_384},
	"openai:o3":                   {Context: 200_000, Output: 100_000},
	"openai:o4-mini":              {Context: 200_000, Output: 100_000},
	"anthropic:claude-opus-4-1":   {Context: 200_000, Output: 32_000},
	"anthropic:claude-opus-4-0":   {Context: 200_000, Output: 32_000},
	"anthropic:claude-opus-4":     {Context: 200_000, Output: 32_000},
	"anthropic:claude-opus-4-5":   {Context: 200_000, Output: 64_000},
	"anthropic:claude-sonnet-4-5": {Context: 200_000, Output: 64_000},
	"anthropic:claude-sonnet-4-0": {Context: 200_000, Output: 64_000},
	"anthropic:claude-sonnet-4":   {Context: 200_000, Output: 64_000},
	"anthropic:claude-3-7-sonnet": {Context: 200_000, Output: 64_000},
	"anthropic:claude-haiku-4-5":  {Context: 200_000, Output: 64_000},
	"anthropic:claude-3-5-sonnet": {Context: 200_000, Output: 8_192},
	"anthropic:claude-3-5-haiku":  {Context: 200_000, Output: 8_192},
	"anthropic:claude-3-haiku":    {Context: 200_000, Output: 4_096},
}

// DefaultWindows returns a copy of the built-in table.
func DefaultWindows() Windows { return maps.Clone(defaultWindows) }

// For returns model's window; a dated snapshot falls back to its undated
// name, as prices do. ok is false for a model not in the table.
func (w Windows) For(model string) (win Window, ok bool) {
	if win, ok = w[model]; !ok {
		win, ok = w[dateSuffix.ReplaceAllString(model, "")]
	}
	return win, ok
}

// smallest is the window of a model list (PATCHWRIGHT_MODEL may name
// fallbacks, "a,b"): the smallest known context and output limit among
// them, since the run may move to any of them with its conversation.
func (w Windows) smallest(models string) Window {
	var out Window
	for _, m := range strings.Split(models, ",") {
		win, _ := w.For(strings.TrimSpace(m))
		out.Context = smallerKnown(out.Context, win.Context)
		out.Output = smallerKnown(out.Output, win.Output)
	}
	return out
}

// smallerKnown is the smaller of two limits where zero means unknown.
func smallerKnown(a, b int64) int64 {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}

// LoadWindows reads the windows of an operator's prices file (see
// LoadPrices) over the built-in table: an entry's optional
// "context_window" and "max_output_tokens" (tokens), for example
//
//	{"openai:qwen2.5-coder:7b": {"input": 0, "output": 0, "context_window": 16384}}
//
// An entry may hold only them. A window of fewer than 1,024 tokens, a
// negative output limit or one not smaller than the window is an error,
// as is any error LoadPrices reports for the file's format. An empty path
// returns the built-in table.
func LoadWindows(path string) (Windows, error) {
	windows := DefaultWindows()
	entries, err := readEntries(path)
	if err != nil {
		return nil, err
	}
	for model, e := range entries {
		if e.ContextWindow == nil && e.MaxOutput == nil {
			continue
		}
		win, _ := windows.For(model)
		if e.ContextWindow != nil {
			win.Context = *e.ContextWindow
		}
		if e.MaxOutput != nil {
			win.Output = *e.MaxOutput
		}
		if err := win.Check(); err != nil {
			return nil, fmt.Errorf("read prices %s: %q: %w", path, model, err)
		}
		windows[model] = win
	}
	return windows, nil
}

// minWindow is the smallest context window accepted: below it not even
// the system prompt and the tools fit.
const minWindow = 1024

// Check reports a window that cannot be: under 1,024 tokens, a negative
// output limit, or one not smaller than the window.
func (w Window) Check() error {
	switch {
	case w.Context != 0 && w.Context < minWindow:
		return fmt.Errorf("context_window %d is under %d tokens", w.Context, minWindow)
	case w.Output < 0:
		return fmt.Errorf("max_output_tokens %d is negative", w.Output)
	case w.Context != 0 && w.Output >= w.Context:
		return fmt.Errorf("max_output_tokens %d is not smaller than context_window %d", w.Output, w.Context)
	}
	return nil
}

// WindowFromEnv is model's window: PATCHWRIGHT_CONTEXT_WINDOW when set,
// else the prices file's entry (PATCHWRIGHT_PRICES), else the built-in
// table's; zero fields are unknown (the agent then uses its defaults).
// getenv nil means os.Getenv.
func WindowFromEnv(model string, getenv func(string) string) (Window, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	windows, err := LoadWindows(getenv(EnvPrices))
	if err != nil {
		return Window{}, fmt.Errorf("%s: %w", EnvPrices, err)
	}
	win := windows.smallest(model)
	if v := getenv(EnvContextWindow); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < minWindow {
			return Window{}, fmt.Errorf("%s: %q is not a number of tokens of at least %d", EnvContextWindow, v, minWindow)
		}
		win.Context = n
		if win.Output >= n {
			// The table's output limit is the model's, not this server's.
			win.Output = 0
		}
	}
	return win, nil
}
