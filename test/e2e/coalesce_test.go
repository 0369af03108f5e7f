package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// heldHook is an exec hook that writes each event it is given to dir/event-SEQ.json and
// then holds on until release is called: a sink that a test keeps busy, so that its
// buffer fills and its on-full policy acts.
func heldHook(t *testing.T) (dir, hook string, release func()) {
	t.Helper()
	dir = t.TempDir()
	flag := filepath.Join(dir, "release")
	hook = filepath.Join(dir, "hook.sh")
	script := fmt.Sprintf("#!/bin/sh\ncat > %s/event-$KUBEEVENTS_SEQ.json\nwhile [ ! -e %s ]; do sleep 0.05; done\n", dir, flag)
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, hook, func() {
		t.Helper()
		if err := os.WriteFile(flag, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// hookGiven is what a heldHook in dir has been given so far, by file name; false while
// one of its files is still being written.
func hookGiven(t *testing.T, dir string) (map[string][]byte, bool) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "event-*.json"))
	given := map[string][]byte{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil || len(raw) == 0 || raw[len(raw)-1] != '\n' {
			return nil, false
		}
		given[filepath.Base(f)] = raw
	}
	return given, true
}

// hookEvent is one event an exec hook was given, with what a merged event must keep.
type hookEvent struct {
	clusterEnvelope
	Health *struct {
		Status string `json:"status"`
	} `json:"health"`
}

// A sink that coalesces (a held exec hook, buffer=1, on-full=coalesce) merges the changes
// of one object of one cluster, never an object of one cluster with its namesake of
// another, and a merged event keeps all its changes said: its cluster, its health. Once
// delivered, the checkpoint counts what it stands for as delivered: a resumed run finds
// nothing changed.
func TestCoalescedKeepsClusterHealthAndCheckpoint(t *testing.T) {
	second, kubeconfig := twoClusters(t)
	ns := newNamespace(t)
	second.namespaceIn(t, ns)
	clusters := map[string]kubernetes.Interface{"one": client, "two": second.client}
	ckpt := filepath.Join(t.TempDir(), "kubeevents.ckpt")
	dir, hook, release := heldHook(t)
	args := []string{"--kubeconfig", kubeconfig, "watch", "configmaps", "-n", ns, "--context", "one,two", "--health",
		"--resume", ckpt, "-o", "json", "--sink", "exec(buffer=1,on-full=coalesce)=" + hook}
	p := startKubeevents(t, args...)

	set := func(cluster, name, version string) {
		t.Helper()
		cms := clusters[cluster].CoreV1().ConfigMaps(ns)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"cluster": cluster, "version": version}}
		var err error
		if version == "1" {
			_, err = cms.Create(context.Background(), cm, metav1.CreateOptions{})
		} else {
			_, err = cms.Update(context.Background(), cm, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	set("one", "hold", "1")
	waitUntil(t, p, eventWait, "the hook holding the first event", func() bool {
		files, _ := filepath.Glob(filepath.Join(dir, "event-*.json"))
		return len(files) == 1
	})
	// While the hook holds it: "settings" in cluster one takes the sink's one slot, and
	// its next changes merge into it; its namesake in cluster two, made and changed
	// meanwhile, waits for a slot of its own.
	set("one", "settings", "1")
	set("one", "settings", "2")
	set("one", "settings", "3")
	set("two", "settings", "1")
	set("two", "settings", "2")
	shown := 0 // on the screen, which does not coalesce: six changes
	p.waitFor(eventWait, "the six changes on the screen", func(line string) bool {
		shown++
		return shown == 6
	})
	release()

	// The last event the hook was given of each cluster's settings is its last version,
	// said to be that cluster's, with its health.
	last := map[string]hookEvent{}
	waitUntil(t, p, eventWait, "each cluster's last version of settings delivered to the hook", func() bool {
		given, complete := hookGiven(t, dir)
		if !complete {
			return false
		}
		clear(last)
		for f, raw := range given {
			var ev hookEvent
			if err := json.Unmarshal(raw, &ev); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var obj corev1.ConfigMap
			if err := json.Unmarshal(ev.Object, &obj); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if obj.Name != "settings" {
				continue
			}
			if got, want := clusterOf(ev.clusterEnvelope), obj.Data["cluster"]; got != want {
				t.Fatalf("%s: cluster %q's settings said to be cluster %q's:\n%s", f, want, got, raw)
			}
			if ev.Health == nil || ev.Health.Status != "Current" {
				t.Fatalf("%s: health %+v, want Current:\n%s", f, ev.Health, raw)
			}
			if prev, ok := last[obj.Data["cluster"]]; !ok || prev.Seq < ev.Seq {
				last[obj.Data["cluster"]] = ev
			}
		}
		return versionOf(t, last["one"]) == "3" && versionOf(t, last["two"]) == "2"
	})
	given, _ := hookGiven(t, dir)
	t.Logf("the hook was given %d events of 7 changes", len(given))
	if _, code := p.interrupt(15 * time.Second); code != 0 {
		t.Fatalf("exit %d after Ctrl-C; stderr:\n%s", code, p.Stderr())
	}

	// Everything was delivered: resumed, nothing changed since.
	resumed := startKubeevents(t, args...)
	for _, name := range []string{"one", "two"} {
		resumed.waitStderr(eventWait, regexp.MustCompile(`cluster `+name+`: resumed configmaps from \S+ \(written [^)]*\): `+
			`\d+ now, 0 changed, 0 created, 0 deleted since`))
	}
}

func versionOf(t *testing.T, ev hookEvent) string {
	t.Helper()
	if ev.Object == nil {
		return ""
	}
	var obj corev1.ConfigMap
	if err := json.Unmarshal(ev.Object, &obj); err != nil {
		t.Fatal(err)
	}
	return obj.Data["version"]
}
