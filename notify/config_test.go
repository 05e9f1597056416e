package notify

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/wardenhq/warden/conf"
)

func TestChannels(t *testing.T) {
	t.Setenv("NOTIFY_TEST_TOKEN", "s3cret")
	var doc yaml.Node
	src := "- webhook: {url: \"https://hooks.example/T0\", format: slack, headers: {X-Token: \"${NOTIFY_TEST_TOKEN}\"}}\n- webhook: {url: \"http://127.0.0.1:9/a\"}\n"
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	var cs Channels
	if errs := conf.Decode("w.yaml", "approvals.notify", doc.Content[0], &cs); errs != nil {
		t.Fatal(errs)
	}
	want := []Target{
		{URL: "https://hooks.example/T0", Format: FormatSlack, Headers: map[string]string{"X-Token": "s3cret"}},
		{URL: "http://127.0.0.1:9/a", Format: FormatJSON},
	}
	if got := cs.Targets(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if s := fmt.Sprintf("%v %+v %#v", *cs[0].Webhook, *cs[0].Webhook, *cs[0].Webhook); strings.Contains(s, "s3cret") {
		t.Fatalf("a webhook prints its header value: %s", s)
	}
}
