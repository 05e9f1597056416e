package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wardenhq/warden/replay"
)

// TestReplayExitCodes records two hook decisions with `hooks dispatch`,
// then replays the trace: under the same policies nothing changes (exit
// 0); under a set where no-delete asks, the delete changes (exit 1) and
// is listed; a replay that cannot be done exits 2.
func TestReplayExitCodes(t *testing.T) {
	dir := t.TempDir()
	data := t.TempDir()
	live := writeFile(t, dir, "live.yaml", testPolicies)
	changed := writeFile(t, dir, "changed.yaml", strings.Replace(strings.Replace(testPolicies,
		"decision: deny\nreason: deleting databases is not allowed", "decision: ask\nreason: deleting databases needs approval", 1),
		`version: "2"`, `version: "3"`, 1))
	for _, tool := range []string{"delete_database", "read_file"} {
		cli(t, `{"tool_name":"`+tool+`","tool_input":{}}`, "hooks", "dispatch", "tool.pre_call", "--policy", live, "--data", data)
	}
	tests := []struct {
		name string
		args []string
		code int
		want []string // in stdout, or stderr for exit 2
	}{
		{"same policies", []string{"--policy", live}, exitReplaySame,
			[]string{"replayed 2 records under policy revision ", ": 0 changed", "deny      deny      1"}},
		{"changed policies", []string{"--policy", changed}, exitReplayChanged,
			[]string{": 1 changed", "deny      ask       1  *", "no-delete  0", "tool.pre_call  delete_database  deny      no-delete  ask       no-delete"}},
		{"filtered to nothing", []string{"--policy", changed, "--event", "steps/message"}, exitReplaySame,
			[]string{"replayed 0 records"}},
		{"no such trace", []string{"--policy", live, "--data", dir + "/none"}, exitReplayError, []string{"opening the trace"}},
		{"broken policy", []string{"--policy", writeFile(t, dir, "bad.yaml", "id: x\nversion: \"1\"\nevents: [tool.pre_call]\nwhen: 'tool.name =='\ndecision: deny\n")},
			exitReplayError, []string{"bad.yaml:4"}},
		{"bad flag", []string{"--nope"}, exitReplayError, []string{"flag provided but not defined"}},
		{"bad since", []string{"--since", "yesterday"}, exitReplayError, []string{"--since"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"replay", "--data", data, "--builtin=false"}, tt.args...)
			code, out, errOut := cli(t, "", args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out, errOut)
			}
			got := out
			if code == exitReplayError {
				got = errOut
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
		})
	}
	code, out, errOut := cli(t, "", "replay", "--data", data, "--builtin=false", "--policy", changed, "-o", "json")
	var rep replay.Report
	if code != exitReplayChanged || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	if rep.Summary.Replayed != 2 || rep.Summary.Changed != 1 || len(rep.Changed) != 1 ||
		rep.Changed[0].Tool != "delete_database" || rep.Changed[0].New.Decision != "ask" {
		t.Errorf("%s", out)
	}
}
