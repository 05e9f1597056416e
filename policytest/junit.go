package policytest

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// JUnit XML as CI systems read it (the Jenkins/Ant schema): testsuites >
// testsuite, one per test file > testcase, one per case > failure.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr"`
	Hostname  string      `xml:"hostname,attr"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML: a testsuite per test file
// (named by its path), a testcase per case (classname: the file's path
// with dots for slashes, without .yaml), and for a failed case a failure
// whose message is its failure line and whose text adds the policy results.
func (r *Report) WriteJUnit(w io.Writer) error {
	host, _ := os.Hostname()
	doc := junitSuites{Name: "warden test", Tests: r.Tests(), Failures: r.Failed()}
	var total time.Duration
	for _, f := range r.Files {
		s := junitSuite{Name: f.Path, Tests: len(f.Cases), Failures: f.Failed(),
			Timestamp: f.Timestamp.UTC().Format("2006-01-02T15:04:05"), Hostname: host}
		class := classname(f.Path)
		var d time.Duration
		for _, c := range f.Cases {
			d += c.Duration
			jc := junitCase{Name: c.Name, Classname: class, Time: seconds(c.Duration)}
			if !c.Passed {
				line := FailureLine(f.Path, &c)
				jc.Failure = &junitFailure{Message: line, Type: "PolicyTestFailure", Text: line + "\n" + resultLines(&c)}
			}
			s.Cases = append(s.Cases, jc)
		}
		s.Time = seconds(d)
		total += d
		doc.Suites = append(doc.Suites, s)
	}
	doc.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// classname is a test file's path as a JUnit class name:
// policies/email_test.yaml → policies.email_test.
func classname(path string) string {
	p := filepath.ToSlash(filepath.Clean(path))
	p = strings.TrimSuffix(strings.TrimSuffix(p, ".yaml"), ".yml")
	p = strings.TrimLeft(strings.ReplaceAll(p, "/", "."), ".")
	return p
}

// seconds formats d as JUnit times are: seconds with three decimals.
func seconds(d time.Duration) string {
	return fmt.Sprintf("%.3f", d.Seconds())
}
