package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/patchwright/patchwright/agent/config"
	"github.com/patchwright/patchwright/agent/ledger"
	"github.com/patchwright/patchwright/internal/logkey"
	"github.com/patchwright/patchwright/report"
	"github.com/patchwright/patchwright/sandbox"
)

// ImageResolver resolves an image a job names, once, to what every
// container of the job is created from, pulling it when the operator
// allows (sandbox/docker.Docker.ResolveImage). Its errors wrapping
// sandbox.ErrImageUnavailable are the configuration's or the operator's
// to fix; others are the engine's.
type ImageResolver interface {
	ResolveImage(ctx context.Context, ref string) (sandbox.Image, error)
}

// runImage is one image of the run: the sandbox's (service "") or a
// service's.
type runImage struct {
	service string
	img     sandbox.Image
}

// resolveImages resolves the sandbox's image and the services' before
// anything starts, so a refused or failed pull ends the run before
// setup, and every container later uses the one digest resolved here.
// Without an ImageResolver the names are used as they are.
func (r *run) resolveImages(ctx context.Context) error {
	if r.e.Images == nil {
		return nil
	}
	img, err := r.resolveImage(ctx, "", r.clone.image)
	if err != nil {
		return err
	}
	r.clone.image = img.Use
	for _, s := range r.clone.cfg.Services {
		img, err := r.resolveImage(ctx, s.Name, s.Image)
		if err != nil {
			return err
		}
		if r.clone.serviceImages == nil {
			r.clone.serviceImages = map[string]string{}
		}
		r.clone.serviceImages[s.Name] = img.Use
	}
	return nil
}

// resolveImage resolves one image and keeps it for the ledger and the
// report.
func (r *run) resolveImage(ctx context.Context, service, ref string) (sandbox.Image, error) {
	img, err := r.e.Images.ResolveImage(ctx, ref)
	switch {
	case err == nil:
		r.clone.images = append(r.clone.images, runImage{service: service, img: img})
		return img, nil
	case !errors.Is(err, sandbox.ErrImageUnavailable):
		return img, fmt.Errorf("resolve image %s: %w", ref, err)
	case service != "":
		return img, configError{fmt.Errorf("service %s: %w (load it on the engine, or ask the operator to allow its registry)", service, err)}
	}
	return img, configError{fmt.Errorf("sandbox %w (load it on the engine, ask the operator to allow its registry, or choose another with --image or `image:` in %s)", err, config.Path)}
}

// recordImages writes what resolveImages resolved to the ledger.
func (r *run) recordImages() {
	for _, ri := range r.clone.images {
		ev := &ledger.ImageResolved{Service: ri.service, Ref: ri.img.Ref, Use: ri.img.Use, Digest: ri.img.Digest, Pulled: ri.img.Pulled}
		if _, err := r.ledger.Append(ev); err != nil {
			r.e.logger().Warn("record a resolved image", logkey.Err, err)
		}
	}
}

// serviceImage is what service s's container is created from.
func (r *run) serviceImage(s config.Service) string {
	if use, ok := r.clone.serviceImages[s.Name]; ok {
		return use
	}
	return s.Image
}

// pulledImages are the images pulled for the run, for the body's
// Configuration line.
func (r *run) pulledImages() []report.PulledImage {
	var out []report.PulledImage
	for _, ri := range r.clone.images {
		if ri.img.Pulled {
			out = append(out, report.PulledImage{Service: ri.service, Ref: ri.img.Ref, Digest: ri.img.Digest})
		}
	}
	return out
}
