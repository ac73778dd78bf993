package config

import (
	"strings"
	"testing"
	"time"
)

func TestSchedulesParsed(t *testing.T) {
	c, err := Parse([]byte("schedules:\n  - cron: \"0 6 * * 1\"\n    title: Update the changelog\n    body: Add the week's entries.\n  - cron: \"@daily\"\n    title: Triage\n"))
	if err != nil || len(c.Schedules) != 2 || c.Schedules[0].Title != "Update the changelog" || c.Schedules[1].Cron != "@daily" {
		t.Fatalf("Parse = %+v, %v", c.Schedules, err)
	}
}

// Every bad schedule is refused with the entry and why.
func TestSchedulesRefused(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{`[{cron: "61 * * * *", title: a}]`, "schedules[0].cron"},
		{`[{cron: "* * * * *", title: a}]`, "runs more often than every 1h0m0s"},
		{`[{cron: "@every 2h", title: a}]`, "@every are not supported"},
		{`[{cron: "CRON_TZ=Europe/Paris 0 6 * * 1", title: a}]`, "time zones"},
		{`[{cron: "@daily", title: " "}]`, "schedules[0].title: empty"},
		{`[{cron: "@daily", title: A}, {cron: "@weekly", title: a}]`, `schedules[1].title: "a" is used twice`},
		{`[{cron: "@daily", title: a, when: now}]`, `unknown key "when"`},
	} {
		_, err := Parse([]byte("schedules: " + c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("schedules: %s: %v, want %q", c.yaml, err, c.want)
		}
	}
}

// A period starts at the schedule's latest time at or before now.
func TestPeriod(t *testing.T) {
	weekly, err := Schedule{Cron: "0 6 * * 1"}.Parse()
	if err != nil {
		t.Fatal(err)
	}
	monday := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	for _, now := range []time.Time{monday, monday.Add(time.Second), monday.Add(7*24*time.Hour - time.Second)} {
		if p, ok := Period(weekly, now); !ok || !p.Equal(monday) {
			t.Errorf("Period(%v) = %v %v, want %v", now, p, ok, monday)
		}
	}
	if p, _ := Period(weekly, monday.Add(-time.Second)); !p.Equal(monday.Add(-7 * 24 * time.Hour)) {
		t.Errorf("just before Monday: %v", p)
	}
	yearly, _ := Schedule{Cron: "0 0 29 2 *"}.Parse() // leap days only
	if p, ok := Period(yearly, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)); ok {
		t.Errorf("no leap day in the last year, got %v", p)
	}
}
