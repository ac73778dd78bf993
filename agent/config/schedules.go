package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedule is one `schedules:` entry: recurring work, such as "update the
// changelog weekly". At each time its cron names, Patchwright opens an
// issue with Title and Body and runs it as if labelled (jobs/schedule).
type Schedule struct {
	// Cron is a five-field cron expression in UTC ("0 6 * * 1") or a
	// descriptor (@daily, @weekly, @monthly).
	Cron  string `yaml:"cron"`
	Title string `yaml:"title"`
	Body  string `yaml:"body"`
}

// MaxSchedules bounds the schedules of one repository.
const MaxSchedules = 20

// MinScheduleGap is the shortest period a schedule may have: each period
// is a run with its own budget.
const MinScheduleGap = time.Hour

var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Parse returns the schedule's cron, in UTC.
func (s Schedule) Parse() (cron.Schedule, error) {
	spec := strings.TrimSpace(s.Cron)
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") || strings.HasPrefix(spec, "@every") {
		return nil, fmt.Errorf("%q: time zones and @every are not supported (five fields in UTC, or @daily, @weekly, @monthly)", s.Cron)
	}
	sched, err := cronParser.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("%q: %v", s.Cron, err)
	}
	return sched, nil
}

// Period is the start of the schedule's period holding now: its latest
// time at or before now, found from the time after it. ok is false when
// none falls in the year before now.
func Period(sched cron.Schedule, now time.Time) (time.Time, bool) {
	now = now.UTC()
	// Step back until a time is found, then forward to the last one.
	for back := time.Hour; back <= 366*24*time.Hour; back *= 2 {
		t := sched.Next(now.Add(-back))
		if t.After(now) {
			continue
		}
		for next := sched.Next(t); !next.After(now); next = sched.Next(t) {
			t = next
		}
		return t, true
	}
	return time.Time{}, false
}

func (c Config) scheduleErrors() []string {
	var errs []string
	if len(c.Schedules) > MaxSchedules {
		errs = append(errs, fmt.Sprintf("schedules: %d entries, at most %d", len(c.Schedules), MaxSchedules))
	}
	titles := map[string]bool{}
	for i, s := range c.Schedules {
		sched, err := s.Parse()
		switch {
		case err != nil:
			errs = append(errs, fmt.Sprintf("schedules[%d].cron: %v", i, err))
		case gap(sched) < MinScheduleGap:
			errs = append(errs, fmt.Sprintf("schedules[%d].cron: %q runs more often than every %v", i, s.Cron, MinScheduleGap))
		}
		title := strings.TrimSpace(s.Title)
		switch {
		case title == "":
			errs = append(errs, fmt.Sprintf("schedules[%d].title: empty", i))
		case titles[strings.ToLower(title)]:
			errs = append(errs, fmt.Sprintf("schedules[%d].title: %q is used twice; each schedule needs its own", i, title))
		}
		titles[strings.ToLower(title)] = true
	}
	return errs
}

// gap is the shortest time between two of a schedule's times over a
// sample of a week.
func gap(sched cron.Schedule) time.Duration {
	t := sched.Next(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	shortest := time.Duration(1<<63 - 1)
	for range 200 {
		next := sched.Next(t)
		if next.IsZero() {
			break
		}
		shortest = min(shortest, next.Sub(t))
		t = next
	}
	return shortest
}
