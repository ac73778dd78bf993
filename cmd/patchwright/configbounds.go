package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/patchwright/patchwright/webhook"
)

// parseBodyBounds checks the webhook's body bounds; empty keeps a default.
func parseBodyBounds(bodies, bytes string, cfg *config) error {
	if bodies != "" {
		n, err := strconv.Atoi(bodies)
		if err != nil || n <= 0 {
			return fmt.Errorf("PATCHWRIGHT_WEBHOOK_MAX_BODIES: %q is not a positive number", bodies)
		}
		cfg.webhookMaxBodies = n
	}
	if bytes != "" {
		n, err := strconv.ParseInt(bytes, 10, 64)
		if err != nil || n < webhook.MinBodyBytes {
			return fmt.Errorf("PATCHWRIGHT_WEBHOOK_MAX_BODY_BYTES: %q is not a number of bytes of at least %d", bytes, webhook.MinBodyBytes)
		}
		cfg.webhookMaxBodyBytes = n
	}
	return nil
}

// parseWorkerBounds reads the fairness limits and the drain's grace
// period; empty keeps a default. A limit of 0 is none (-1 inside).
func parseWorkerBounds(inst, repo, grace string, cfg *config) error {
	limit := func(name, v string, dst *int) error {
		if v == "" {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("%s: %q is not a number of jobs (0 for no limit)", name, v)
		}
		*dst = n
		if n == 0 {
			*dst = -1
		}
		return nil
	}
	if err := limit("PATCHWRIGHT_INSTALLATION_CONCURRENCY", inst, &cfg.installationConcurrency); err != nil {
		return err
	}
	if err := limit("PATCHWRIGHT_REPO_CONCURRENCY", repo, &cfg.repoConcurrency); err != nil {
		return err
	}
	if grace != "" {
		d, err := time.ParseDuration(grace)
		if err != nil || d <= 0 {
			return fmt.Errorf("PATCHWRIGHT_SHUTDOWN_GRACE: %q is not a positive duration such as 5m", grace)
		}
		cfg.shutdownGrace = d
	}
	return nil
}
