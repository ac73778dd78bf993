package outcomes

import (
	"errors"
	"testing"
	"time"
)

const app = "patchwright-test[bot]"

// Each state and each "human" flag from the facts GitHub gives; another
// app's review ("name[bot]") is not a human review, a commit with no
// linked account is a human's.
func TestClassify(t *testing.T) {
	opened := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	closed := opened.Add(3 * time.Hour)
	base := Facts{Installation: 11, Repo: "acme/widgets", PR: 8, State: "closed", OpenedAt: opened, ClosedAt: closed}
	for _, tc := range []struct {
		name                string
		edit                func(*Facts)
		state               string
		humanCommit, review bool
	}{
		{"merged untouched", func(f *Facts) { f.Merged, f.CommitAuthors = true, []string{app, "PatchWright-Test[bot]"} }, StateMerged, false, false},
		{"merged with a human commit", func(f *Facts) { f.Merged, f.CommitAuthors = true, []string{app, "maria"} }, StateMerged, true, false},
		{"another app's commit", func(f *Facts) { f.Merged, f.CommitAuthors = true, []string{app, "dependabot[bot]"} }, StateMerged, true, false},
		{"unlinked commit author", func(f *Facts) { f.Merged, f.CommitAuthors = true, []string{"Maria Example"} }, StateMerged, true, false},
		{"bot review only", func(f *Facts) { f.Merged, f.Reviewers = true, []string{"copilot[bot]", app} }, StateMerged, false, false},
		{"human review", func(f *Facts) { f.Merged, f.Reviewers = true, []string{"copilot[bot]", "omar"} }, StateMerged, false, true},
		{"closed unmerged", func(f *Facts) {}, StateClosed, false, false},
		{"superseded", func(f *Facts) { f.Superseded = true }, StateSuperseded, false, false},
		{"open", func(f *Facts) { f.State = "open" }, StateOpen, false, false},
	} {
		f := base
		tc.edit(&f)
		r, err := Classify(f, app)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.State != tc.state || r.HumanCommit != tc.humanCommit || r.HumanReview != tc.review {
			t.Errorf("%s: %s, human commit %v, human review %v; want %s, %v, %v", tc.name, r.State, r.HumanCommit, r.HumanReview, tc.state, tc.humanCommit, tc.review)
		}
		if open := r.State == StateOpen; open != r.ClosedAt.IsZero() {
			t.Errorf("%s: closed at %v for state %s", tc.name, r.ClosedAt, r.State)
		}
	}
}

// Facts no agent pull request can have are refused, each with what is
// wrong.
func TestClassifyRefusesBadFacts(t *testing.T) {
	good := Facts{Installation: 11, Repo: "acme/widgets", PR: 8, State: "open"}
	for name, edit := range map[string]func(*Facts){
		"no installation":  func(f *Facts) { f.Installation = 0 },
		"no pull request":  func(f *Facts) { f.PR = 0 },
		"repo not a pair":  func(f *Facts) { f.Repo = "widgets" },
		"unknown state":    func(f *Facts) { f.State = "merged" },
		"merged yet open":  func(f *Facts) { f.Merged = true },
		"negative request": func(f *Facts) { f.PR = -3 },
	} {
		f := good
		edit(&f)
		if _, err := Classify(f, app); !errors.Is(err, ErrBadFacts) {
			t.Errorf("%s: %v, want ErrBadFacts", name, err)
		}
	}
}

// However many repositories, installations and models there are, each
// label keeps at most its bound of values plus Other, the most frequent
// ones first.
func TestLabelsAreBounded(t *testing.T) {
	var recs []Record
	for i := range 3 * MaxRepos {
		for range 1 + i%3 {
			recs = append(recs, Record{Installation: int64(1 + i), Repo: "acme/r" + string(rune('a'+i%26)) + string(rune('a'+i/26)),
				PR: 1 + len(recs), State: StateOpen, Model: "m" + string(rune('a'+i%26)) + string(rune('a'+i/26))})
		}
	}
	seen := [3]map[string]bool{{}, {}, {}}
	for k := range groups(recs) {
		for i, v := range k {
			seen[i][v] = true
		}
	}
	for i, bound := range []int{MaxInstallations, MaxRepos, MaxModels} {
		if n := len(seen[i]); n != bound+1 || !seen[i][Other] {
			t.Errorf("label %s: %d values (other: %v), want %d and %s", labels[i], n, seen[i][Other], bound+1, Other)
		}
	}
	// Records 2, 5, 8… (i%3 == 2) have three pull requests each: the
	// busiest repositories keep their own series.
	if !seen[1]["acme/rca"] {
		t.Errorf("the busiest repository acme/rca lost its series: %v", seen[1])
	}
}
