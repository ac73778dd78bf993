package sandbox

import "errors"

// Image is an image resolved once for a job (ImageResolver): every
// container of the job is created from Use, so a tag moved on the
// registry or on the engine while the job runs changes nothing.
type Image struct {
	// Ref is the image as the configuration named it ("node:20").
	Ref string
	// Use is what containers are created from: NAME@sha256:… when the
	// engine knows the image's registry digest, else the local image ID
	// (sha256:…) of an image that was built or loaded on the engine.
	Use string
	// Digest is the registry's manifest digest (sha256:…); empty for an
	// image only ever built or loaded on the engine.
	Digest string
	// Pulled is set when the engine did not have the image and pulled it
	// for this job.
	Pulled bool
}

// ErrImageUnavailable is wrapped by an ImageResolver's errors that the
// job's configuration or the operator must fix: an image the engine does
// not have and may not pull (its registry is not allowed), a pull the
// registry refused or that failed, a reference that is not one. Other
// errors are the engine's.
var ErrImageUnavailable = errors.New("image unavailable")
