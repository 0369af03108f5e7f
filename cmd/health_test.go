package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// deploymentLine is a recorded JSON line of a Deployment web, with available of its 3
// replicas available, at time.
func deploymentLine(typ, time string, seq, available int) string {
	conditions := `[{"type":"Available","status":"False"}]`
	if available == 3 {
		conditions = `[{"type":"Available","status":"True"}]`
	}
	obj := fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop","generation":1,"resourceVersion":"%d"},`+
		`"spec":{"replicas":3},"status":{"observedGeneration":1,"replicas":3,"updatedReplicas":3,"readyReplicas":%d,"availableReplicas":%d,"conditions":%s}}`,
		seq, available, available, conditions)
	return fmt.Sprintf(`{"type":%q,"time":%q,"seq":%d,"resource":{"group":"apps","version":"v1","resource":"deployments"},"object":%s}`, typ, time, seq, obj)
}

// A replay computes the STALLED events from the recording's times: the Deployment made no
// progress from 10:00 to 10:02, so with --stalled-after 1m it stalled at 10:01, before the
// event of 10:02; the STALLED line the recording holds (a live run's, with another stall
// time) is made again, not shown twice. Without --stalled-after it is shown as recorded.
func TestReplayStalls(t *testing.T) {
	recording := filepath.Join(t.TempDir(), "events.jsonl")
	lines := []string{
		deploymentLine("ADDED", "2026-11-23T10:00:00Z", 1, 1),
		strings.Replace(deploymentLine("STALLED", "2026-11-23T10:00:30Z", 2, 1), `"seq":2,`,
			`"seq":2,"health":{"status":"InProgress","message":"no progress for 30s: Available: 1/3","previous":"InProgress"},`, 1),
		deploymentLine("MODIFIED", "2026-11-23T10:02:00Z", 3, 1),
		deploymentLine("MODIFIED", "2026-11-23T10:02:30Z", 4, 3),
	}
	if err := os.WriteFile(recording, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	type line struct {
		Type   string `json:"type"`
		Time   string `json:"time"`
		Health *struct {
			Status  string `json:"status"`
			Message string `json:"message"`
		} `json:"health"`
	}
	read := func(stdout string) []line {
		var out []line
		for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
			var ln line
			if err := json.Unmarshal([]byte(l), &ln); err != nil {
				t.Fatalf("%v: %s", err, l)
			}
			out = append(out, ln)
		}
		return out
	}

	code, stdout, stderr := runCommand(t, "replay", recording, "-o", "json", "--stalled-after", "1m")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got []string
	for _, l := range read(stdout) {
		got = append(got, l.Type+" "+l.Time+" "+l.Health.Status)
	}
	want := []string{"ADDED 2026-11-23T10:00:00Z InProgress", "STALLED 2026-11-23T10:01:00Z InProgress",
		"MODIFIED 2026-11-23T10:02:00Z InProgress", "MODIFIED 2026-11-23T10:02:30Z Current"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("replayed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	code, stdout, stderr = runCommand(t, "replay", recording, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	replayed := read(stdout)
	if len(replayed) != 4 || replayed[1].Type != "STALLED" || replayed[1].Health == nil || !strings.Contains(replayed[1].Health.Message, "30s") {
		t.Errorf("without --stalled-after, the recorded STALLED line is not replayed as it was:\n%s", stdout)
	}
}

// The run computes health only when something reads it; then with the shipped rules and
// the config file's, and the kinds' owns for --owned.
func TestHealthOnlyWhenRead(t *testing.T) {
	config := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte("health:\n  MyApp.example.com:\n    owns: [deployments.apps]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"watch", "pods"}, false},
		{[]string{"watch", "pods", "-o", "json"}, false},
		{[]string{"watch", "pods", "--jq", "."}, false},
		{[]string{"watch", "pods", "--on", "crashloop"}, false},
		{[]string{"watch", "pods", "--health"}, true},
		{[]string{"watch", "pods", "-o", "wide"}, true},
		{[]string{"watch", "pods", "--on", "degraded"}, true},
		{[]string{"watch", "pods", "--on", "ready"}, true},
		{[]string{"watch", "pods", "--sink", "jq=select(.health.status == \"Failed\")"}, true},
		{[]string{"watch", "pods", "--sink", "http(jq=.health)=http://x"}, true},
		{[]string{"watch", "pods", "--sink", "exec(jq=.object)=true"}, false},
		{[]string{"watch", "pods", "--until", ".health.status == \"Current\""}, true},
		{[]string{"watch", "pods", "--stalled-after", "5m"}, true},
		{[]string{"watch", "myapps.example.com/web", "--until-ready"}, true},
		{[]string{"watch", "myapps.example.com/web", "--owned", "--config", config}, true},
	} {
		cfg := configOf(t, tc.args...)
		if got := cfg.Health != nil; got != tc.want {
			t.Errorf("%s: health computed %v, want %v", strings.Join(tc.args, " "), got, tc.want)
		}
		if tc.args[len(tc.args)-1] == config {
			owns := cfg.Watch.HealthOwns(schema.GroupKind{Group: "example.com", Kind: "MyApp"})
			if len(owns) != 1 || owns[0] != "deployments.apps" {
				t.Errorf("the config file's owns: %q", owns)
			}
		}
	}
}
