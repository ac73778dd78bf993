package jobs

// Log attribute keys, in one place for every package (STYLE item 12): the
// webhook adds event and delivery, then installation, repository and issue;
// the worker adds task and retry.
const (
	LogEvent        = "event"
	LogDelivery     = "delivery"
	LogInstallation = "installation"
	LogRepo         = "repo"
	LogIssue        = "issue"
	LogSender       = "sender"
	LogTask         = "task"
	LogRetry        = "retry"
	LogError        = "err"
)
