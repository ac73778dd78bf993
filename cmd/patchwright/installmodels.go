package main

import (
	"fmt"
	"strings"

	agentconfig "github.com/patchwright/patchwright/agent/config"
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

// checkModelPriced refuses an operator's model (each of a fallback list)
// without a price, as installmodel refuses an installation's: a run's
// cost, its caps and the monthly caps all need one. A replay calls no
// model and costs nothing.
func checkModelPriced(spec string, prices provider.Prices) error {
	for _, m := range strings.Split(spec, ",") {
		m = strings.TrimSpace(m)
		if m == "" || strings.HasPrefix(strings.ToLower(m), provider.NameReplay+":") {
			continue
		}
		if _, known := prices.Cost(m, provider.Usage{}); !known {
			return fmt.Errorf("PATCHWRIGHT_MODEL: %q has no price in the price table, so its cost and caps cannot be kept: add it to %s", m, provider.EnvPrices)
		}
	}
	return nil
}

// checkPolicyModels refuses at start what the policy's models: are sure
// to refuse at every job: an installation whose own entry in the policy
// sets models, and whose models (its own, or the operator's without an
// entry in PATCHWRIGHT_INSTALLATION_MODELS) fall outside them. Where an
// organisation's entry decides, the login is known only at the job,
// which refuses it then (pipeline.ErrPolicy).
func checkPolicyModels(pf *agentconfig.PolicyFile, set installmodel.Set, model string) error {
	if pf == nil {
		return nil
	}
	for id, entry := range pf.Installations {
		if entry.Models == nil {
			continue
		}
		p, name := pf.For(id, "")
		models, whose := strings.Split(model, ","), "PATCHWRIGHT_MODEL"
		if e, ok := set[id]; ok {
			models, whose = e.Models(), "PATCHWRIGHT_INSTALLATION_MODELS: installation "+fmt.Sprint(id)
		}
		if m := p.DisallowedModel(models...); m != "" {
			return fmt.Errorf("%s: model %q is not allowed by PATCHWRIGHT_POLICY_FILE's %s (models: %s)", whose, m, name, strings.Join(p.Models, ", "))
		}
	}
	return nil
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
