package notify

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/wardenhq/warden/conf"
)

func TestChannels(t *testing.T) {
	t.Setenv("NOTIFY_TEST_TOKEN", "s3cret")
	src := "- webhook: {url: \"https://hooks.example/T0\", format: slack, headers: {X-Token: \"${NOTIFY_TEST_TOKEN}\"}}\n- webhook: {url: \"http://127.0.0.1:9/a\"}\n"
	var cs Channels
	if errs := conf.DecodeYAML("w.yaml", "approvals.notify", []byte(src), &cs); errs != nil {
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
