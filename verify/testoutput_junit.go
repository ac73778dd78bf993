package verify

import (
	"bytes"
	"encoding/xml"
	"io"
	"slices"
	"strings"
)

// JUnit XML, the report pytest, Surefire, Gradle, PHPUnit, CTest and
// Meson write.

// junitCase is one <testcase> of a JUnit XML report.
type junitCase struct {
	Classname string    `xml:"classname,attr"`
	Name      string    `xml:"name,attr"`
	File      string    `xml:"file,attr"` // pytest's xunit1 family only
	Failure   *struct{} `xml:"failure"`
	Error     *struct {
		Type string `xml:"type,attr"`
	} `xml:"error"`
	Skipped *struct{} `xml:"skipped"`
}

// phpunitRisky is the error type PHPUnit 9's JUnit report gives a risky
// test (one that asserted nothing): PHPUnit itself passes it ("OK, but
// … risky tests!", exit 0), and so does the summary; with failOnRisky
// its exit code still fails the check.
const phpunitRisky = `PHPUnit\Framework\RiskyTestError`

// junitSuite is a <testsuite>, or a <testsuites> holding them.
type junitSuite struct {
	Cases  []junitCase  `xml:"testcase"`
	Suites []junitSuite `xml:"testsuite"`
}

func (s junitSuite) all() []junitCase {
	out := s.Cases
	for _, in := range s.Suites {
		out = append(out, in.all()...)
	}
	return out
}

// junitCases reads every root element of a stream of reports; ok is false
// when none is a test suite or the stream is not XML.
func junitCases(report []byte) (cases []junitCase, ok bool) {
	d := xml.NewDecoder(bytes.NewReader(report))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return cases, ok
		}
		if err != nil {
			return nil, false
		}
		start, isStart := tok.(xml.StartElement)
		if !isStart {
			continue
		}
		if start.Name.Local != "testsuite" && start.Name.Local != "testsuites" {
			return nil, false
		}
		var suite junitSuite
		if err := d.DecodeElement(&suite, &start); err != nil {
			return nil, false
		}
		cases, ok = append(cases, suite.all()...), true
	}
}

// id is the test's name as its runner prints it: pytest's node ID
// ("tests/test_calc.py::TestGroup::test_neg") when the report names the
// file, "classname::name" otherwise.
func (c junitCase) id() string {
	if c.Classname == "" || c.Classname == c.Name { // CTest repeats the name
		return c.Name
	}
	module := strings.ReplaceAll(strings.TrimSuffix(c.File, ".py"), "/", ".")
	if c.File == "" || !strings.HasSuffix(c.File, ".py") || (c.Classname != module && !strings.HasPrefix(c.Classname, module+".")) {
		return c.Classname + "::" + c.Name
	}
	parts := []string{c.File}
	if class := strings.TrimPrefix(strings.TrimPrefix(c.Classname, module), "."); class != "" {
		parts = append(parts, strings.Split(class, ".")...)
	}
	return strings.Join(append(parts, c.Name), "::")
}

// ParseJUnit reads JUnit XML reports (pytest's --junit-xml, Surefire's
// TEST-*.xml files one after another): every test by name. It returns nil
// when the input holds no report: the check is then read from its text
// output.
func ParseJUnit(kind TestKind, report []byte) *TestSummary {
	cases, ok := junitCases(report)
	if !ok {
		return nil
	}
	s := &TestSummary{Kind: kind, Counted: true, Named: true}
	for _, c := range cases {
		name := c.id()
		switch {
		case c.Error != nil && c.Classname == "":
			// pytest's collection error: a file, not a test.
			s.Errors++
			s.FailedTests = addName(s.FailedTests, name)
			continue
		case c.Skipped != nil:
			s.Skipped++
			s.SkippedTests = append(s.SkippedTests, name)
			continue
		case c.Failure == nil && c.Error != nil && c.Error.Type == phpunitRisky:
			s.Passed++
		case c.Failure != nil || c.Error != nil:
			s.Failed++
			s.FailedTests = addName(s.FailedTests, name)
		default:
			s.Passed++
		}
		s.RanTests = append(s.RanTests, name)
	}
	slices.Sort(s.RanTests)
	s.RanTests = slices.Compact(s.RanTests)
	slices.Sort(s.SkippedTests)
	s.NoTests = s.Ran() == 0 && s.Errors == 0
	return s
}
