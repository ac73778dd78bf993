// Package logkey names the attributes of every log line, in one place
// for every package, so one search finds a job's lines from the webhook
// to the model loop: the webhook adds Event and Delivery, then
// Installation, Repo and Issue; the worker adds Task and Retry; the loop
// adds Step, Tool and Stop. An error is always Err. It imports nothing.
package logkey

// The keys.
const (
	Event        = "event"
	Delivery     = "delivery"
	Installation = "installation"
	Repo         = "repo"
	Issue        = "issue"
	Sender       = "sender"
	Task         = "task"
	Retry        = "retry"
	Step         = "step"
	Tool         = "tool"
	Stop         = "stop"
	Err          = "err"
)
