package docker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"

	"github.com/patchwright/patchwright/sandbox"
)

// A job's services write in two places: the volumes their images declare
// (a database's data directory) and their containers' writable layers.
// With ServicesSpec.DiskDir both count against the job's disk bound. The
// volumes are binds of directories on the job's bounded file system, so
// a write past it fails there as the work tree's does. The writable
// layers live in the engine's storage, which no portable option bounds
// (--storage-opt size needs overlay2 on XFS with project quotas, and
// this engine may run fuse-overlayfs): they are measured every
// serviceDiskPoll instead, and when they hold more than the bounded file
// system has free, the services are killed and the job's later commands
// fail with sandbox.ErrDiskBound. Between two measures a service can
// write what it writes in serviceDiskPoll past the bound.

// serviceDiskPoll is how often the services' writable layers are
// measured. The engine walks each layer to size it, which costs little
// for what services write in the seconds between.
const serviceDiskPoll = 2 * time.Second

// serviceVolumes makes a volume on s.diskDir for each path the image of
// svc declares, and returns their mounts. The engine fills each from the
// image at the first mount, as it would an anonymous volume.
func (s *dockerServices) serviceVolumes(ctx context.Context, svc sandbox.Service, labels map[string]string) ([]mount.Mount, error) {
	img, err := s.d.cli.ImageInspect(ctx, svc.Image)
	if err != nil {
		return nil, fmt.Errorf("inspect service image %s: %w", svc.Image, err)
	}
	var paths []string
	if img.Config != nil {
		for p := range img.Config.Volumes {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	var mounts []mount.Mount
	for _, p := range paths {
		sum := sha256.Sum256([]byte(svc.Name + "\x00" + p))
		name := s.network + "-" + hex.EncodeToString(sum[:6])
		dir := filepath.Join(s.diskDir, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("service %s: volume %s: %w", svc.Name, p, err)
		}
		_, err := s.d.cli.VolumeCreate(ctx, volume.CreateOptions{Name: name, Labels: labels, Driver: "local",
			DriverOpts: map[string]string{"type": "none", "o": "bind", "device": dir}})
		if err != nil {
			return nil, fmt.Errorf("service %s: create the volume for %s: %w", svc.Name, p, err)
		}
		s.vols = append(s.vols, name)
		mounts = append(mounts, mount.Mount{Type: mount.TypeVolume, Source: name, Target: p})
	}
	return mounts, nil
}

// watchDisk measures the services' writable layers until Close, and
// stops the services once they pass what the job's disk bound leaves.
func (s *dockerServices) watchDisk() {
	tick := time.NewTicker(serviceDiskPoll)
	defer tick.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-tick.C:
		}
		if err := s.overBound(context.Background()); err != nil {
			s.stopForDisk(err)
			return
		}
	}
}

// overBound reports, as an error wrapping sandbox.ErrDiskBound, whether
// the services' writable layers hold more than DiskDir's file system has
// free; a layer that cannot be measured counts as past the bound.
func (s *dockerServices) overBound(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var used int64
	for name, id := range s.ids {
		info, _, err := s.d.cli.ContainerInspectWithRaw(ctx, id, true)
		if err != nil || info.SizeRw == nil {
			return fmt.Errorf("service %s: its disk use cannot be measured (%v), so it was stopped: %w", name, err, sandbox.ErrDiskBound)
		}
		used += *info.SizeRw
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(s.diskDir, &st); err != nil {
		return fmt.Errorf("measure the job's disk: %v: %w", err, sandbox.ErrDiskBound)
	}
	if free := int64(st.Bavail) * st.Bsize; used > free {
		return fmt.Errorf("the job's services wrote %d MiB into their containers, more than the %d MiB the job's disk bound had left, so they were stopped: %w", used>>20, free>>20, sandbox.ErrDiskBound)
	}
	return nil
}

// stopForDisk makes every later command of the job fail with err, then
// kills the services and waits until they stopped: a command that sees
// a service gone finds its job stopped.
func (s *dockerServices) stopForDisk(err error) {
	s.d.stopJob(s.jobID, err)
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	now := 0
	for _, id := range s.ids {
		s.d.cli.ContainerStop(ctx, id, container.StopOptions{Signal: "KILL", Timeout: &now})
	}
}

// removeVolumes removes the services' volumes; their directories go with
// the job's bounded file system.
func (s *dockerServices) removeVolumes(ctx context.Context) error {
	var errs []error
	for _, v := range s.vols {
		if err := s.d.cli.VolumeRemove(ctx, v, true); err != nil {
			errs = append(errs, fmt.Errorf("remove service volume %s: %w", v, err))
		}
	}
	return errors.Join(errs...)
}

// stopJob records why the job's commands may no longer run.
func (d *Docker) stopJob(jobID string, err error) {
	d.stoppedMu.Lock()
	defer d.stoppedMu.Unlock()
	if d.stopped == nil {
		d.stopped = map[string]error{}
	}
	d.stopped[jobID] = err
}

// jobStopped is why the job's commands may no longer run; nil if they may.
func (d *Docker) jobStopped(jobID string) error {
	d.stoppedMu.Lock()
	defer d.stoppedMu.Unlock()
	return d.stopped[jobID]
}

// forgetJob drops the job's record, once its services are gone.
func (d *Docker) forgetJob(jobID string) {
	d.stoppedMu.Lock()
	defer d.stoppedMu.Unlock()
	delete(d.stopped, jobID)
}
