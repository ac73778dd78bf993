package deploy

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/patchwright/patchwright/jobs/tasks"
	"github.com/patchwright/patchwright/jobs/worker"
)

// configValue is key of the ConfigMap patchwright in dir.
func configValue(t *testing.T, objs []object, dir, key string) string {
	t.Helper()
	for _, o := range objs {
		if o.kind() == "ConfigMap" && o.name() == "patchwright" && filepath.Dir(o.file) == "kubernetes" {
			return str(o.doc, "data", key)
		}
	}
	t.Fatalf("no ConfigMap patchwright in %s", dir)
	return ""
}

// TestWorkersOutliveTheirDrain: a worker pod is killed
// terminationGracePeriodSeconds after SIGTERM; it must live through the
// drain's grace period and the hand-back, or a running job goes back to
// the queue with nothing said on its issue. The margin in which an
// interrupted job pushes its draft is the end of the grace period, not
// added to it: it must leave the jobs most of the grace to finish.
func TestWorkersOutliveTheirDrain(t *testing.T) {
	objs := manifests(t)
	grace, err := time.ParseDuration(configValue(t, objs, "kubernetes", "PATCHWRIGHT_SHUTDOWN_GRACE"))
	if err != nil {
		t.Fatalf("PATCHWRIGHT_SHUTDOWN_GRACE: %v", err)
	}
	if m := worker.DefaultInterruptMargin(grace); m <= 0 || m > grace/2 {
		t.Errorf("interrupt margin %v of a %v grace period: want some, and at most half", m, grace)
	}
	need := grace + worker.HandBackTimeout
	n := 0
	for _, o := range objs {
		if o.kind() != "Deployment" || o.name() != "patchwright-worker" {
			continue
		}
		n++
		secs, ok := get(o.doc, "spec", "template", "spec", "terminationGracePeriodSeconds").(int)
		if !ok || time.Duration(secs)*time.Second <= need {
			t.Errorf("%s: terminationGracePeriodSeconds %v, want at least %v (grace %v plus the hand-back)", o.file, secs, need.Seconds(), grace)
		}
	}
	if n < 2 {
		t.Errorf("%d worker Deployments, want both variants", n)
	}
}

// TestScaledObject checks keda.yaml against what KEDA's ScaledObject
// (keda.sh/v1alpha1) requires and what the queue is: it scales the worker
// Deployment, on asynq's pending and active lists of the agent queue, one
// pod per PATCHWRIGHT_WORKER_CONCURRENCY jobs.
func TestScaledObject(t *testing.T) {
	objs := manifests(t)
	concurrency := configValue(t, objs, "kubernetes", "PATCHWRIGHT_WORKER_CONCURRENCY")
	var found bool
	for _, o := range objs {
		if o.kind() != "ScaledObject" {
			continue
		}
		found = true
		if str(o.doc, "apiVersion") != "keda.sh/v1alpha1" {
			t.Errorf("%s: apiVersion %q", o.file, str(o.doc, "apiVersion"))
		}
		ref := get(o.doc, "spec", "scaleTargetRef")
		if str(ref, "kind") != "Deployment" || str(ref, "name") != "patchwright-worker" || str(ref, "apiVersion") != "apps/v1" {
			t.Errorf("%s: scaleTargetRef %v, want the worker Deployment", o.file, ref)
		}
		lo, _ := get(o.doc, "spec", "minReplicaCount").(int)
		hi, _ := get(o.doc, "spec", "maxReplicaCount").(int)
		if lo < 1 || hi < lo {
			t.Errorf("%s: replicas %d..%d; want at least one worker (KEDA's scale to zero would leave an idle queue unwatched by the sweeper)", o.file, lo, hi)
		}
		lists := map[string]bool{}
		for _, tr := range list(o.doc, "spec", "triggers") {
			if str(tr, "type") != "redis" {
				t.Errorf("%s: trigger %v: want redis", o.file, tr)
				continue
			}
			addr := str(tr, "metadata", "address")
			if addr != "patchwright-redis.patchwright.svc.cluster.local:6379" {
				t.Errorf("%s: address %q is not redis.yaml's Service as KEDA's namespace sees it", o.file, addr)
			}
			if str(tr, "metadata", "listLength") != concurrency {
				t.Errorf("%s: listLength %q, want PATCHWRIGHT_WORKER_CONCURRENCY %q: jobs per worker", o.file, str(tr, "metadata", "listLength"), concurrency)
			}
			if _, err := strconv.Atoi(str(tr, "metadata", "databaseIndex")); err != nil {
				t.Errorf("%s: databaseIndex: %v", o.file, err)
			}
			lists[str(tr, "metadata", "listName")] = true
		}
		for _, state := range []string{"pending", "active"} {
			// asynq's key of a queue's list (internal/base: "asynq:{<queue>}:<state>").
			if name := fmt.Sprintf("asynq:{%s}:%s", tasks.QueueAgent, state); !lists[name] {
				t.Errorf("%s: no trigger on %s", o.file, name)
			}
		}
	}
	if !found {
		t.Fatal("no ScaledObject under kubernetes/")
	}
}
