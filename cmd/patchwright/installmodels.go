package main

import (
	"fmt"
	"strings"

	"github.com/patchwright/patchwright/agent/provider"
	"github.com/patchwright/patchwright/agent/provider/installmodel"
	"github.com/patchwright/patchwright/jobs/pipeline"
)

// modelsSetting is PATCHWRIGHT_INSTALLATION_MODELS, in the model group.
func (raw *rawConfig) modelsSetting() setting {
	return setting{env: "PATCHWRIGHT_INSTALLATION_MODELS", flag: "installation-models", group: groupModel, kind: "path", shown: "none: every installation uses the model",
		usage: "YAML file, or directory of one file per installation ID as a Kubernetes Secret mounts it, giving installations their own model, fallback, summary and review models and provider API keys and base URLs (docs/models.md); not readable by every user; each model needs a price; checked at start",
		dst:   &raw.installationModels}
}

// loadInstallationModels reads the installations' models and keys; ""
// is none. Each model needs a price in prices, the table every cost and
// cap uses, and the operator's model (model) must be set for the
// installations without an entry.
func loadInstallationModels(path, model string, prices provider.Prices) (installmodel.Set, error) {
	if path = strings.TrimSpace(path); path == "" {
		return nil, nil
	}
	if model == "" {
		return nil, fmt.Errorf("PATCHWRIGHT_INSTALLATION_MODELS needs PATCHWRIGHT_MODEL too, the model of the installations it does not name")
	}
	set, err := installmodel.Load(path, prices)
	if err != nil {
		return nil, fmt.Errorf("PATCHWRIGHT_INSTALLATION_MODELS: %w", err)
	}
	return set, nil
}

// installationExecutors are base with each installation's own models
// and keys in place of the operator's: metered, reviewed and windowed
// as the operator's are, their keys searched for in every output.
func installationExecutors(d workerDeps, base *pipeline.Executor) (map[int64]*pipeline.Executor, error) {
	if len(d.cfg.installationModels) == 0 {
		return nil, nil
	}
	prices := d.cfg.sandbox.prices
	out := make(map[int64]*pipeline.Executor, len(d.cfg.installationModels))
	for _, id := range d.cfg.installationModels.IDs() {
		e := d.cfg.installationModels[id]
		where := "PATCHWRIGHT_INSTALLATION_MODELS: installation " + fmt.Sprint(id)
		opts := e.Options(d.log.With("installation", id))
		prov, err := provider.New(e.Spec(), opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		exec := *base
		exec.Provider = meteredProvider{prov, d.m, prices}
		exec.SummaryProvider, exec.ReviewProvider = nil, exec.Provider
		if e.SummaryModel != "" {
			if exec.SummaryProvider, err = installationProvider(e.SummaryModel, opts, d); err != nil {
				return nil, fmt.Errorf("%s: summary_model: %w", where, err)
			}
		}
		if e.ReviewModel != "" {
			if exec.ReviewProvider, err = installationProvider(e.ReviewModel, opts, d); err != nil {
				return nil, fmt.Errorf("%s: review_model: %w", where, err)
			}
		}
		if exec.Window, err = provider.WindowFromEnv(e.Spec(), nil); err != nil {
			return nil, err
		}
		exec.ModelSource, exec.ModelKeys = installmodel.Source(id), e.Keys(id)
		out[id] = &exec
	}
	d.log.Info("installations with their own models and keys", "installations", d.cfg.installationModels.IDs())
	return out, nil
}

// installationProvider is one of an installation's other models, metered.
func installationProvider(spec string, opts provider.Options, d workerDeps) (provider.Provider, error) {
	p, err := provider.New(spec, opts)
	if err != nil {
		return nil, err
	}
	return meteredProvider{p, d.m, d.cfg.sandbox.prices}, nil
}
