package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"strings"
)

// EnvPrices names a JSON file whose prices replace or extend the built-in
// table (see LoadPrices for the format).
const EnvPrices = "PATCHWRIGHT_PRICES"

// Price is what a model charges, in US dollars per million tokens.
type Price struct {
	Input       float64 `json:"input"`
	CachedInput float64 `json:"cached_input"` // cache reads
	CacheWrite  float64 `json:"cache_write"`  // tokens written to the cache
	Output      float64 `json:"output"`
	// Images: the model reads images in a user message (Message.Images).
	// A capability, not a price, kept here so one table says all an
	// operator tells about a model.
	Images bool `json:"images,omitempty"`
}

// Prices maps "provider:model" to its price.
type Prices map[string]Price

// defaultPrices are list prices as published by the vendors (standard
// tier, 5-minute cache writes for Anthropic), and whether the model reads
// images (Claude 3.5 Haiku was released reading text only, so it is not
// marked; an operator's file can say otherwise). They age: operators override
// them with PATCHWRIGHT_PRICES rather than trusting a stale figure.
var defaultPrices = Prices{
	"openai:gpt-5":                {Input: 1.25, CachedInput: 0.125, CacheWrite: 1.25, Output: 10, Images: true},
	"openai:gpt-5-mini":           {Input: 0.25, CachedInput: 0.025, CacheWrite: 0.25, Output: 2, Images: true},
	"openai:gpt-4.1":              {Input: 2, CachedInput: 0.5, CacheWrite: 2, Output: 8, Images: true},
	"openai:gpt-4.1-mini":         {Input: 0.4, CachedInput: 0.1, CacheWrite: 0.4, Output: 1.6, Images: true},
	"openai:gpt-4.1-nano":         {Input: 0.1, CachedInput: 0.025, CacheWrite: 0.1, Output: 0.4, Images: true},
	"openai:gpt-4o":               {Input: 2.5, CachedInput: 1.25, CacheWrite: 2.5, Output: 10, Images: true},
	"openai:gpt-4o-mini":          {Input: 0.15, CachedInput: 0.075, CacheWrite: 0.15, Output: 0.6, Images: true},
	"openai:o3":                   {Input: 2, CachedInput: 0.5, CacheWrite: 2, Output: 8, Images: true},
	"openai:o4-mini":              {Input: 1.1, CachedInput: 0.275, CacheWrite: 1.1, Output: 4.4, Images: true},
	"anthropic:claude-opus-4-1":   {Input: 15, CachedInput: 1.5, CacheWrite: 18.75, Output: 75, Images: true},
	"anthropic:claude-sonnet-4-5": {Input: 3, CachedInput: 0.3, CacheWrite: 3.75, Output: 15, Images: true},
	"anthropic:claude-sonnet-4":   {Input: 3, CachedInput: 0.3, CacheWrite: 3.75, Output: 15, Images: true},
	"anthropic:claude-3-7-sonnet": {Input: 3, CachedInput: 0.3, CacheWrite: 3.75, Output: 15, Images: true},
	"anthropic:claude-haiku-4-5":  {Input: 1, CachedInput: 0.1, CacheWrite: 1.25, Output: 5, Images: true},
	"anthropic:claude-3-5-haiku":  {Input: 0.8, CachedInput: 0.08, CacheWrite: 1, Output: 4},
	"anthropic:claude-opus-4-5":   {Input: 5, CachedInput: 0.5, CacheWrite: 6.25, Output: 25, Images: true},
	"anthropic:claude-3-5-sonnet": {Input: 3, CachedInput: 0.3, CacheWrite: 3.75, Output: 15, Images: true},
	"anthropic:claude-sonnet-4-0": {Input: 3, CachedInput: 0.3, CacheWrite: 3.75, Output: 15, Images: true},
	"anthropic:claude-opus-4-0":   {Input: 15, CachedInput: 1.5, CacheWrite: 18.75, Output: 75, Images: true},
	"anthropic:claude-opus-4":     {Input: 15, CachedInput: 1.5, CacheWrite: 18.75, Output: 75, Images: true},
	"anthropic:claude-3-haiku":    {Input: 0.25, CachedInput: 0.03, CacheWrite: 0.3, Output: 1.25, Images: true},
}

// DefaultPrices returns a copy of the built-in table.
func DefaultPrices() Prices { return maps.Clone(defaultPrices) }

// Cost estimates a call's cost from the built-in table; see Prices.Cost.
func Cost(model string, u Usage) (usd float64, known bool) {
	return defaultPrices.Cost(model, u)
}

// dateSuffix matches the snapshot dates vendors append to model names
// ("claude-sonnet-4-5-20250929", "gpt-4o-2024-08-06") and "-latest".
var dateSuffix = regexp.MustCompile(`-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$`)

// Cost estimates what a call cost in US dollars. model is "provider:name";
// a dated snapshot falls back to its undated name. known is false when the
// model is not in the table: the report then says "cost unknown" rather
// than guess.
func (p Prices) Cost(model string, u Usage) (usd float64, known bool) {
	price, ok := p[model]
	if !ok {
		price, ok = p[dateSuffix.ReplaceAllString(model, "")]
	}
	if !ok {
		return 0, false
	}
	// InputTokens includes cache reads and writes; each part has its price.
	plain := max(u.InputTokens-u.CachedInputTokens-u.CacheWriteTokens, 0)
	total := float64(plain)*price.Input +
		float64(u.CachedInputTokens)*price.CachedInput +
		float64(u.CacheWriteTokens)*price.CacheWrite +
		float64(u.OutputTokens)*price.Output
	return total / 1e6, true
}

// priceEntry is a price as written in an operator's file; pointers tell a
// missing field from a zero one.
type priceEntry struct {
	Input       *float64 `json:"input"`
	CachedInput *float64 `json:"cached_input"`
	CacheWrite  *float64 `json:"cache_write"`
	Output      *float64 `json:"output"`
	// Images sets Price.Images; an entry with only it (and window fields)
	// changes the capability of a model already in the table.
	Images *bool `json:"images"`
	// The window's fields, which LoadWindows reads; an entry with only
	// them sets no price.
	ContextWindow *int64 `json:"context_window"`
	MaxOutput     *int64 `json:"max_output_tokens"`
}

// LoadPrices reads an operator's price file over the built-in table:
//
//	{"openai:gpt-4.1": {"input": 2, "cached_input": 0.5, "output": 8},
//	 "openai:qwen2.5-coder:7b": {"input": 0, "output": 0},
//	 "openai:qwen2.5-vl:7b": {"input": 0, "output": 0, "images": true}}
//
// Keys are "provider:model"; values are US dollars per million tokens.
// input and output are required; cached_input and cache_write default to
// input. images (default false) says the model reads images; an entry of
// a model in the table may set only it. An entry may also hold a window
// (see LoadWindows), or only one.
// Unknown fields and negative prices are errors. An empty path returns
// the built-in table.
func LoadPrices(path string) (Prices, error) {
	prices := DefaultPrices()
	entries, err := readEntries(path)
	if err != nil {
		return nil, err
	}
	for model, e := range entries {
		if e.Input == nil && e.Output == nil && e.CachedInput == nil && e.CacheWrite == nil {
			if err := prices.onlyImages(model, e); err != nil {
				return nil, fmt.Errorf("read prices %s: %w", path, err)
			}
			continue
		}
		price, err := e.price(model)
		if err != nil {
			return nil, fmt.Errorf("read prices %s: %w", path, err)
		}
		if k, ok := prices.key(model); ok && e.Images == nil {
			// A new price does not forget what the model reads.
			price.Images = prices[k].Images
		}
		prices[model] = price
	}
	return prices, nil
}

// onlyImages applies an entry that sets no price: its images flag, if
// any, to a model the table has; window fields alone are LoadWindows'.
func (p Prices) onlyImages(model string, e priceEntry) error {
	if e.Images == nil {
		if e.ContextWindow == nil && e.MaxOutput == nil {
			return fmt.Errorf("%q: input and output prices are required", model)
		}
		return nil
	}
	key, ok := p.key(model)
	if !ok {
		return fmt.Errorf("%q: images is set but the model has no price: give input and output too (0 for a local model)", model)
	}
	price := p[key]
	price.Images = *e.Images
	p[model] = price
	return nil
}

// key is the table's key for model: itself, or its undated name.
func (p Prices) key(model string) (string, bool) {
	if _, ok := p[model]; ok {
		return model, true
	}
	undated := dateSuffix.ReplaceAllString(model, "")
	_, ok := p[undated]
	return undated, ok
}

// ReadsImages reports whether every model of models ("provider:model",
// or a fallback list "a,b": the run may move to any of them with its
// conversation) is marked as reading images. A model not in the table
// reads text only.
func (p Prices) ReadsImages(models string) bool {
	for _, m := range strings.Split(models, ",") {
		key, ok := p.key(strings.TrimSpace(m))
		if !ok || !p[key].Images {
			return false
		}
	}
	return models != ""
}

// readEntries reads the prices file at path, strictly; "" is none.
func readEntries(path string) (map[string]priceEntry, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read prices: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var entries map[string]priceEntry
	if err := dec.Decode(&entries); err != nil {
		return nil, fmt.Errorf("read prices %s: %w", path, err)
	}
	return entries, nil
}

// PricesFromEnv loads the file PATCHWRIGHT_PRICES names, or the built-in
// table when it is unset. getenv nil means os.Getenv.
func PricesFromEnv(getenv func(string) string) (Prices, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	p, err := LoadPrices(getenv(EnvPrices))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvPrices, err)
	}
	return p, nil
}

func (e priceEntry) price(model string) (Price, error) {
	if _, name, ok := strings.Cut(model, ":"); !ok || name == "" {
		return Price{}, fmt.Errorf("%q: want a provider:model key", model)
	}
	if e.Input == nil || e.Output == nil {
		return Price{}, fmt.Errorf("%q: input and output prices are required", model)
	}
	p := Price{Input: *e.Input, CachedInput: *e.Input, CacheWrite: *e.Input, Output: *e.Output, Images: e.Images != nil && *e.Images}
	if e.CachedInput != nil {
		p.CachedInput = *e.CachedInput
	}
	if e.CacheWrite != nil {
		p.CacheWrite = *e.CacheWrite
	}
	if p.Input < 0 || p.CachedInput < 0 || p.CacheWrite < 0 || p.Output < 0 {
		return Price{}, errors.New(model + ": prices cannot be negative")
	}
	return p, nil
}
