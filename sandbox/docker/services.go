package docker

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/patchwright/patchwright/sandbox"
)

// A job's services run on a network of its own: internal (Docker forwards
// nothing from it), its bridge named pwj…, and the firewall refuses every
// packet from a pwj… bridge to the host, so a sandbox on it reaches the
// services and nothing else. Containers on it may reach each other: that
// is what it is for.
const (
	serviceNetPrefix    = "patchwright-job-"
	serviceBridgePrefix = "pwj"
	// serviceLogLines is how much of each service's output Logs keeps.
	serviceLogLines = "100"
)

// serviceRules keep every pwj… bridge off the host ('+' matches the
// prefix): its gateway address is the host's.
var serviceRules = [][]string{
	{"INPUT", "-i", serviceBridgePrefix + "+", "-j", "REJECT"},
	{"INPUT", "-i", serviceBridgePrefix + "+", "-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"},
	// Between a job's containers packets are bridged, and with
	// br_netfilter they pass FORWARD too: only other ways out are refused.
	{"DOCKER-USER", "-i", serviceBridgePrefix + "+", "!", "-o", serviceBridgePrefix + "+", "-j", "REJECT"},
}

// serviceBridge names a job's bridge: Linux allows 15 bytes.
func serviceBridge(jobID string) string {
	sum := sha256.Sum256([]byte(jobID))
	return serviceBridgePrefix + hex.EncodeToString(sum[:5])
}

type dockerServices struct {
	d       *Docker
	jobID   string
	network string
	ids     map[string]string // service name -> container ID
	once    sync.Once
	err     error
	// diskDir is ServicesSpec.DiskDir; vols the volumes made on it.
	diskDir string
	vols    []string
	done    chan struct{} // closed by Close, to end watchDisk
}

// StartServices creates the job's network and starts each service on it,
// reachable by its name, then waits for their health commands to pass.
// Service containers carry the sandbox labels (the reaper removes them
// when they expire) and the spec's limits; they run as their images say,
// root included (a database needs it), with no-new-privileges.
func (d *Docker) StartServices(ctx context.Context, spec sandbox.ServicesSpec) (sandbox.Services, error) {
	if spec.JobID == "" {
		return nil, errors.New("services spec: JobID is required")
	}
	for _, rule := range serviceRules {
		if err := ensureRule(ctx, rule); err != nil {
			return nil, fmt.Errorf("service network: install the firewall rule that keeps services' networks off the Docker host: %w", err)
		}
	}
	lim, err := limitsOf(spec.Limits)
	if err != nil {
		return nil, err
	}
	ttl := spec.TTL
	if ttl <= 0 {
		ttl = sandbox.DefaultTTL
	}
	labels := map[string]string{
		LabelSandbox: "1",
		LabelJob:     spec.JobID,
		LabelExpires: time.Now().Add(ttl).UTC().Format(time.RFC3339),
	}
	s := &dockerServices{d: d, jobID: spec.JobID, network: serviceNetPrefix + spec.JobID, ids: map[string]string{},
		diskDir: spec.DiskDir, done: make(chan struct{})}
	create := func() error {
		_, err := d.cli.NetworkCreate(ctx, s.network, network.CreateOptions{
			Driver:   "bridge",
			Internal: true,
			Options:  map[string]string{optBridgeName: serviceBridge(spec.JobID)},
			Labels:   labels,
		})
		return err
	}
	err = create()
	if cerrdefs.IsConflict(err) {
		// Left by an attempt of the same job that did not end cleanly.
		if rerr := d.cli.NetworkRemove(ctx, s.network); rerr == nil {
			err = create()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("create the service network of job %s: %w", spec.JobID, err)
	}
	for _, svc := range spec.Services {
		if err := s.start(ctx, svc, labels, lim, spec.Runtime); err != nil {
			return nil, errors.Join(err, s.Close())
		}
	}
	ready := spec.Ready
	if ready <= 0 {
		ready = sandbox.DefaultServiceReady
	}
	for _, svc := range spec.Services {
		if err := s.waitHealthy(ctx, svc, ready); err != nil {
			return nil, errors.Join(err, s.Close())
		}
	}
	if s.diskDir != "" {
		go s.watchDisk()
	}
	return s, nil
}

func (s *dockerServices) start(ctx context.Context, svc sandbox.Service, labels map[string]string, lim sandbox.Limits, runtime string) error {
	init := true
	var mounts []mount.Mount
	if s.diskDir != "" {
		var err error
		if mounts, err = s.serviceVolumes(ctx, svc, labels); err != nil {
			return err
		}
	}
	created, err := s.d.cli.ContainerCreate(ctx,
		&container.Config{Image: svc.Image, Env: svc.Env, Labels: labels, Hostname: svc.Name},
		&container.HostConfig{
			NetworkMode: container.NetworkMode(s.network),
			Mounts:      mounts,
			SecurityOpt: []string{"no-new-privileges"},
			CapDrop:     []string{"NET_RAW", "MKNOD", "AUDIT_WRITE", "SYS_CHROOT"},
			Init:        &init,
			Runtime:     runtime,
			Resources: container.Resources{
				Memory:     lim.MemoryBytes,
				MemorySwap: lim.MemoryBytes,
				NanoCPUs:   int64(lim.CPUs * 1e9),
				PidsLimit:  &lim.PIDs,
				Ulimits:    []*container.Ulimit{{Name: "nofile", Soft: lim.OpenFiles, Hard: lim.OpenFiles}},
			},
		},
		&network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{
			s.network: {Aliases: []string{svc.Name}},
		}}, nil, "")
	if err != nil {
		return fmt.Errorf("create service %s from %s: %w", svc.Name, svc.Image, err)
	}
	s.ids[svc.Name] = created.ID
	if err := s.d.cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		return fmt.Errorf("start service %s: %w", svc.Name, err)
	}
	return nil
}

// healthEvery is how often a service's health command is tried.
const healthEvery = 250 * time.Millisecond

// waitHealthy runs the service's health command until it exits 0, the
// container stops, or ready passes.
func (s *dockerServices) waitHealthy(ctx context.Context, svc sandbox.Service, ready time.Duration) error {
	if len(svc.Health) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, ready)
	defer cancel()
	id := s.ids[svc.Name]
	for {
		info, err := s.d.cli.ContainerInspect(ctx, id)
		if err == nil && info.State != nil && !info.State.Running {
			return fmt.Errorf("service %s stopped (exit %d) before it was healthy: %s", svc.Name, info.State.ExitCode, s.logTail(ctx, id))
		}
		if s.healthy(ctx, id, svc.Health) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("service %s: %q did not pass within %s: %s", svc.Name, svc.Health, ready, s.logTail(context.Background(), id))
		case <-time.After(healthEvery):
		}
	}
}

func (s *dockerServices) healthy(ctx context.Context, id string, cmd []string) bool {
	ex, err := s.d.cli.ContainerExecCreate(ctx, id, container.ExecOptions{Cmd: cmd})
	if err != nil {
		return false
	}
	if err := s.d.cli.ContainerExecStart(ctx, ex.ID, container.ExecStartOptions{Detach: true}); err != nil {
		return false
	}
	for {
		st, err := s.d.cli.ContainerExecInspect(ctx, ex.ID)
		if err != nil {
			return false
		}
		if !st.Running {
			return st.ExitCode == 0
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (s *dockerServices) Network() string { return s.network }

// Logs returns the last lines of each service's output.
func (s *dockerServices) Logs(ctx context.Context) map[string]string {
	out := map[string]string{}
	for name, id := range s.ids {
		out[name] = s.logTail(ctx, id)
	}
	return out
}

func (s *dockerServices) logTail(ctx context.Context, id string) string {
	rc, err := s.d.cli.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: serviceLogLines})
	if err != nil {
		return "(no logs: " + err.Error() + ")"
	}
	defer rc.Close()
	var b bytes.Buffer
	if _, err := stdcopy.StdCopy(&b, &b, rc); err != nil {
		b.WriteString("(logs cut: " + err.Error() + ")")
	}
	return b.String()
}

// Close removes the containers, then their network, on a fresh context.
func (s *dockerServices) Close() error {
	s.once.Do(func() {
		close(s.done)
		defer s.d.forgetJob(s.jobID)
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		var errs []error
		for name, id := range s.ids {
			err := s.d.cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
			if err != nil && !cerrdefs.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("remove service %s: %w", name, err))
			}
		}
		if err := s.d.cli.NetworkRemove(ctx, s.network); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove service network %s: %w", s.network, err))
		}
		errs = append(errs, s.removeVolumes(ctx))
		s.err = errors.Join(errs...)
	})
	return s.err
}

// reapServiceNetworks removes the job networks whose expiry passed (their
// containers are reaped first, as sandboxes); one still in use is left
// for a later round.
func (d *Docker) reapServiceNetworks(ctx context.Context) (int, error) {
	list, err := d.cli.NetworkList(ctx, network.ListOptions{Filters: filters.NewArgs(filters.Arg("label", LabelSandbox), filters.Arg("label", LabelExpires))})
	if err != nil {
		return 0, fmt.Errorf("list service networks: %w", err)
	}
	n := 0
	for _, nw := range list {
		expires, err := time.Parse(time.RFC3339, nw.Labels[LabelExpires])
		if err == nil && time.Now().Before(expires) {
			continue
		}
		if err := d.cli.NetworkRemove(ctx, nw.ID); err == nil {
			n++
		}
	}
	return n, nil
}
