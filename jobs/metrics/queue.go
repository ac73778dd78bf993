package metrics

import (
	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
)

// QueueInspector is the part of *asynq.Inspector the queue collector reads.
type QueueInspector interface {
	Queues() ([]string, error)
	GetQueueInfo(queue string) (*asynq.QueueInfo, error)
}

// WatchQueues registers a collector that asks insp, at each scrape, how
// many tasks every queue holds in each state, and how long its oldest
// pending task has waited. Register it in one kind of process (serve):
// every replica reports the same Redis, so query it with max(), not sum().
func WatchQueues(reg prometheus.Registerer, insp QueueInspector) {
	reg.MustRegister(&queueCollector{insp: insp})
}

var (
	queueTasksDesc = prometheus.NewDesc(Namespace+"_queue_tasks",
		"Tasks in each asynq queue by state, read from Redis at scrape time.",
		[]string{"queue", "state"}, nil)
	queueLatencyDesc = prometheus.NewDesc(Namespace+"_queue_latency_seconds",
		"How long the oldest pending task of each queue has waited.",
		[]string{"queue"}, nil)
	queueUpDesc = prometheus.NewDesc(Namespace+"_queue_inspect_up",
		"1 when the last scrape could read the queues from Redis, 0 when it could not.",
		nil, nil)
)

type queueCollector struct{ insp QueueInspector }

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueTasksDesc
	ch <- queueLatencyDesc
	ch <- queueUpDesc
}

// Collect reports every queue it could read; a failure shows as
// queue_inspect_up 0 rather than a failed scrape, so the process's other
// metrics still arrive while Redis is away.
func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	queues, err := c.insp.Queues()
	up := 1.0
	if err != nil {
		up = 0
	}
	for _, q := range queues {
		info, err := c.insp.GetQueueInfo(q)
		if err != nil {
			up = 0
			continue
		}
		for state, n := range map[string]int{
			"pending": info.Pending, "active": info.Active, "scheduled": info.Scheduled,
			"retry": info.Retry, "archived": info.Archived, "completed": info.Completed,
			"aggregating": info.Aggregating,
		} {
			ch <- prometheus.MustNewConstMetric(queueTasksDesc, prometheus.GaugeValue, float64(n), q, state)
		}
		ch <- prometheus.MustNewConstMetric(queueLatencyDesc, prometheus.GaugeValue, info.Latency.Seconds(), q)
	}
	ch <- prometheus.MustNewConstMetric(queueUpDesc, prometheus.GaugeValue, up)
}
