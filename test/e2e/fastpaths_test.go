package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeevents/kubeevents/internal/switches"
)

// jsonTime is the envelope's time, the one field two runs cannot share.
var jsonTime = regexp.MustCompile(`"time":"[^"]*",`)

// Every speed piece switched off (internal/switches: KUBEEVENTS_FAST_PATHS=off decodes,
// encodes and diffs every object whole, KUBEEVENTS_WIRE_DECODERS=off reads with
// client-go's decoders, and the process settings and the recovery pieces are left to Go
// and client-go) prints the same bytes as every piece
// on, on the same events: two runs side by side, one each way, see the changes of every
// part of a pod (metadata, status, spec; each change leaves the other parts to be reused)
// and print identical JSON lines, diffs included, but for the time.
func TestDiffSameWithFastPathsOff(t *testing.T) {
	ns := newNamespace(t)
	createPod(t, ns, "web", map[string]string{"app": "web"})
	createPod(t, ns, "other", nil)
	args := []string{"watch", "pods", "-n", ns, "-o", "json"}
	var on, off []string
	for _, s := range switches.All() {
		on, off = append(on, s.Env+"=on"), append(off, s.Env+"=off")
	}
	fast := kubeevents(t).Env(on...).Start(args...)
	slow := kubeevents(t).Env(off...).Start(args...)
	for _, s := range []*proc{fast, slow} {
		added := 0
		s.waitJSON(eventWait, "ADDED web and other", func(ev envelope) bool {
			if ev.Type == "ADDED" {
				added++
			}
			return added == 2
		})
	}

	ctx := context.Background()
	pods := client.CoreV1().Pods(ns)
	patch := func(patch string, subresource ...string) {
		t.Helper()
		if _, err := pods.Patch(ctx, "web", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, subresource...); err != nil {
			t.Fatalf("patch %s: %v", patch, err)
		}
	}
	changes := 0
	for i := range 3 {
		patch(fmt.Sprintf(`{"metadata":{"labels":{"round":"%d"},"annotations":{"note":"n%d"}}}`, i, i))
		patch(fmt.Sprintf(`{"status":{"conditions":[{"type":"kubeevents.io/round","status":"True","reason":"R%d"}]}}`, i), "status")
		patch(fmt.Sprintf(`{"spec":{"activeDeadlineSeconds":%d}}`, 3600-i))
		changes += 3
	}
	labelPod(t, ns, "other", "tier", "db")
	changes++
	deletePod(t, ns, "web")

	var outputs [2][]string
	for i, s := range []*proc{fast, slow} {
		s.waitJSON(eventWait, "DELETED web", func(ev envelope) bool { return ev.Type == "DELETED" && ev.name() == "web" })
		if _, code := s.interrupt(10 * time.Second); code != 0 {
			t.Fatalf("exit code %d; stderr:\n%s", code, s.Stderr())
		}
		for _, line := range s.Seen() {
			outputs[i] = append(outputs[i], jsonTime.ReplaceAllString(line, ""))
		}
	}
	modified := 0
	for _, line := range outputs[0] {
		if strings.HasPrefix(line, `{"type":"MODIFIED"`) && strings.Contains(line, `"diff":[`) {
			modified++
		}
	}
	if modified < changes {
		t.Errorf("%d MODIFIED events with a diff, want at least %d:\n%s", modified, changes, strings.Join(outputs[0], "\n"))
	}
	if a, b := strings.Join(outputs[0], "\n"), strings.Join(outputs[1], "\n"); a != b {
		t.Errorf("the output differs with the fast paths off\non:\n%s\noff:\n%s", a, b)
	}
}

// Run as a systemd service, kubeevents' stdout is a socket that journald reads: lines
// arrive whole, in order, and exactly as printed to a pipe.
func TestStdoutSocketGetsEveryLineWhole(t *testing.T) {
	ns := newNamespace(t)
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	journal, stdout := os.NewFile(uintptr(fds[0]), "journal"), os.NewFile(uintptr(fds[1]), "stdout")
	defer journal.Close()
	p := kubeevents(t).Stdout(stdout).Lines(journal).Start("watch", "configmaps", "-n", ns, "-l", "socket-test=yes", "-o", "json")
	stdout.Close() // the child's now
	const n = 30
	big := strings.Repeat("x", 50<<10) // several lines larger than a page
	for i, name := range names("cm", 0, n) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"socket-test": "yes"}},
			Data: map[string]string{"v": big[:(i*1700)%len(big)]}}
		if _, err := client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for len(got) < n {
		line := p.waitFor(eventWait, fmt.Sprintf("event %d of %d", len(got)+1, n), func(string) bool { return true })
		var ev envelope
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %d is not a whole JSON event (%d bytes): %v", len(got)+1, len(line), err)
		}
		if ev.Type != "ADDED" {
			t.Fatalf("line %d: %s %s, want ADDED", len(got)+1, ev.Type, ev.name())
		}
		got = append(got, ev.name())
	}
	if want := names("cm", 0, n); !slices.Equal(got, want) {
		t.Errorf("events in the order %v, want %v", got, want)
	}
	if _, code := p.interrupt(10 * time.Second); code != 0 {
		t.Errorf("after Ctrl-C: exit %d; stderr:\n%s", code, p.Stderr())
	}
}
