package jobs

import "github.com/patchwright/patchwright/internal/logkey"

// Log attribute keys, as internal/logkey names them for every package;
// jobs' callers use these names.
const (
	LogEvent        = logkey.Event
	LogDelivery     = logkey.Delivery
	LogInstallation = logkey.Installation
	LogRepo         = logkey.Repo
	LogIssue        = logkey.Issue
	LogSender       = logkey.Sender
	LogTask         = logkey.Task
	LogRetry        = logkey.Retry
	LogError        = logkey.Err
)
