package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Fallback is an ordered list of models: when the current one fails with
// an outage or overload its own retries could not get past (a transient
// *Error), the same request goes to the next, and the run stays on that
// one. Any other failure (a rejected key, no quota, a context overflow) is
// returned as it is: another model would not fix the request.
type Fallback struct {
	mu    sync.Mutex
	list  []Provider
	at    int
	notes []string
}

// NewFallback returns a Fallback over list, which must hold at least two.
func NewFallback(list ...Provider) (*Fallback, error) {
	if len(list) < 2 {
		return nil, errors.New("a model fallback needs at least two models")
	}
	return &Fallback{list: list}, nil
}

// Model is the model the run is on now.
func (f *Fallback) Model() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.list[f.at].Model()
}

// Models are the list's models, in order: every model the run may call.
func (f *Fallback) Models() []string {
	out := make([]string, len(f.list))
	for i, p := range f.list {
		out[i] = p.Model()
	}
	return out
}

// Models are every model p may call: a Fallback's whole list, else p's
// one model. A wrapper that embeds a Provider keeps its list by having
// a Models method of its own.
func Models(p Provider) []string {
	if l, ok := p.(interface{ Models() []string }); ok {
		return l.Models()
	}
	return []string{p.Model()}
}

// Complete asks the current model and falls back down the list.
func (f *Fallback) Complete(ctx context.Context, req Request) (*Response, error) {
	for {
		f.mu.Lock()
		p, last := f.list[f.at], f.at == len(f.list)-1
		f.mu.Unlock()
		resp, err := p.Complete(ctx, req)
		var perr *Error
		if err == nil || last || ctx.Err() != nil || !errors.As(err, &perr) || perr.Kind != KindTransient {
			if resp != nil {
				resp.FellBack = f.takeNotes()
			}
			return resp, err
		}
		f.mu.Lock()
		f.at++
		f.notes = append(f.notes, fmt.Sprintf("%s failed (%s), continued on %s", p.Model(), perr.Error(), f.list[f.at].Model()))
		f.mu.Unlock()
	}
}

func (f *Fallback) takeNotes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.notes
	f.notes = nil
	return n
}

// newList builds a Fallback from a comma-separated spec.
func newList(spec string, opts Options) (Provider, error) {
	var list []Provider
	for part := range strings.SplitSeq(spec, ",") {
		part = strings.TrimSpace(part)
		if strings.HasPrefix(strings.ToLower(part), NameReplay+":") {
			return nil, fmt.Errorf("model %q: a replay cannot be part of a fallback list", spec)
		}
		p, err := New(part, opts)
		if err != nil {
			return nil, err
		}
		list = append(list, p)
	}
	return NewFallback(list...)
}
