package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/sandbox"
)

// startServices starts the repository's services before the first
// sandbox, so setup, the baseline, the agent and the final checks all
// reach them.
func (r *run) startServices(ctx context.Context) error {
	if len(r.clone.cfg.Services) == 0 {
		return nil
	}
	runner, ok := r.e.Sandboxes.(sandbox.ServiceRunner)
	if !ok {
		return configError{fmt.Errorf("%s: services: this sandbox runner cannot start service containers", config.Path)}
	}
	spec := sandbox.ServicesSpec{JobID: r.job.ID, Limits: r.e.SandboxLimits, Runtime: r.e.SandboxRuntime, DiskDir: r.boundDir("services")}
	for _, s := range r.clone.cfg.Services {
		// The image resolveImages resolved: one digest for the run.
		svc := sandbox.Service{Name: s.Name, Image: r.serviceImage(s), Health: strings.Fields(s.Health)}
		for _, k := range slices.Sorted(maps.Keys(s.Environment)) {
			svc.Env = append(svc.Env, k+"="+s.Environment[k])
		}
		spec.Services = append(spec.Services, svc)
		r.box.serviceHosts = append(r.box.serviceHosts, s.Name)
	}
	var err error
	r.box.services, err = runner.StartServices(ctx, spec)
	if err != nil && !errors.Is(err, context.Canceled) {
		// Most often the repository's doing (a service that exits, a
		// health command that never passes): the maintainer fixes it.
		return configError{err}
	}
	return err
}

// withServices puts a sandbox on the job's service network.
func (r *run) withServices(spec *sandbox.Spec) {
	if r.box.services != nil {
		spec.ServiceNetwork, spec.ServiceHosts = r.box.services.Network(), r.box.serviceHosts
	}
}

// recordServiceLogs writes each service's output tail to the ledger.
func (r *run) recordServiceLogs() {
	if r.box.services == nil || r.ledger == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), serviceLogTimeout)
	defer cancel()
	logs := r.box.services.Logs(ctx)
	for _, s := range r.clone.cfg.Services {
		text, err := withholdText(r.scanner, logs[s.Name])
		if err != nil {
			text = ""
		}
		if _, err := r.ledger.Append(&ledger.ServiceLog{Name: s.Name, Image: s.Image, Log: text}); err != nil {
			r.e.logger().Warn("record a service's log", logkey.Err, err)
		}
	}
}

// stopServices removes the services; the job's sandboxes must be gone.
func (r *run) stopServices() {
	if r.box.services == nil {
		return
	}
	if err := r.box.services.Close(); err != nil {
		r.e.logger().Warn("remove the services", logkey.Err, err)
	}
	r.box.services = nil
}

// serviceLogTimeout bounds reading the services' logs at the end.
const serviceLogTimeout = 30 * time.Second
