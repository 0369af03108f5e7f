//go:build unix

package e2e

// The store sink under pressure on the shared cluster: its retention keeps the file and
// its log within max-size while a watch writes it, and a full disk (here the process's
// file size limit, which fails a write as a full disk does) fails that sink alone.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// churnConfigMaps creates n ConfigMaps of ns, then updates each rounds times, each
// version holding size bytes that do not compress.
func churnConfigMaps(t *testing.T, ns string, n, rounds, size int) {
	t.Helper()
	ctx := context.Background()
	noise := func() string {
		b := make([]byte, size*3/4)
		_, _ = rand.Read(b)
		return base64.StdEncoding.EncodeToString(b)
	}
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("churn-%d", i)}, Data: map[string]string{"v": noise(), "round": "0"}}
		if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for r := 1; r <= rounds; r++ {
		for i := range n {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("churn-%d", i)}, Data: map[string]string{"v": noise(), "round": fmt.Sprint(r)}}
			if _, err := client.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func sizeOf(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// TestStoreSinkStaysWithinMaxSize: a watch's store sink with max-size=4MiB, under 12 MB
// of versions that do not compress (2 objects changed 150 times each): the file and its write-ahead log, sampled all along,
// never pass 4 MiB by more than 5%, and the store ends with every ConfigMap's last
// version.
func TestStoreSinkStaysWithinMaxSize(t *testing.T) {
	ns := newNamespace(t)
	db := filepath.Join(t.TempDir(), "events.db")
	const maxSize = 4 << 20
	s := startKubeevents(t, "watch", "cm", "-n", ns, "--no-screen", "--sink", "store(max-size=4MiB)="+db, "-v=1")
	s.waitStderr(20*time.Second, literal("watching"))

	var largest atomic.Int64
	var peak atomic.Value // "file F, log L" at the largest
	stop := make(chan struct{})
	var sampling sync.WaitGroup
	sampling.Add(1)
	go func() {
		defer sampling.Done()
		for {
			if f, l := sizeOf(db), sizeOf(db+"-wal"); f+l > largest.Load() {
				largest.Store(f + l)
				peak.Store(fmt.Sprintf("file %d, log %d", f, l))
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	// Retention keeps every object's current chain of versions (up to 16): 2 objects
	// whose versions (20 KiB, and a diff as large) do not compress keep 1.5 MB at most,
	// within the 4 MiB.
	const n, rounds = 2, 150
	churnConfigMaps(t, ns, n, rounds, 20<<10) // 302 versions of 40 KiB or more: 12 MB
	last := regexp.MustCompile(`(?m)^churn-\d+\s`)
	waitUntil(t, s, 30*time.Second, "every ConfigMap's last version in the store", func() bool {
		got := runKubeevents(t, 30*time.Second, "get", "cm", "-n", ns, "--store", db, "-o", "jsonpath={range .items[*]}{.metadata.name} {.data.round}{\"\\n\"}{end}")
		return got.code == 0 && strings.Count(got.stdout, fmt.Sprintf(" %d\n", rounds)) == n
	})
	if _, code := s.interrupt(20 * time.Second); code != 0 {
		t.Errorf("exit %d; stderr:\n%s", code, s.Stderr())
	}
	close(stop)
	sampling.Wait()
	largest.Store(max(largest.Load(), sizeOf(db)+sizeOf(db+"-wal")))
	t.Logf("largest file and log: %d bytes (%v; max-size %d)", largest.Load(), peak.Load(), maxSize)
	if largest.Load() > maxSize*105/100 {
		t.Errorf("the file and its log reached %d bytes, over max-size %d by more than 5%%", largest.Load(), maxSize)
	}
	got := runKubeevents(t, 30*time.Second, "get", "cm", "-n", ns, "--store", db)
	if got.code != 0 || len(last.FindAllString(got.stdout, -1)) != n {
		t.Errorf("get cm --store after the churn: exit %d\n%s%s", got.code, got.stdout, got.stderr)
	}
}

// TestStoreSinkDiskFullFailsItAlone: a watch whose store cannot grow (its file size
// limit, as a full disk) says so in one line naming the store, while the screen streams
// every change on, at once, even when the commit that fails is made while events pause;
// the run ends with exit 4 (a sink failed), and the store opens with what was committed
// before.
func TestStoreSinkDiskFullFailsItAlone(t *testing.T) {
	ns := newNamespace(t)
	db := filepath.Join(t.TempDir(), "events.db")

	// The limit is the child's: set around its start only (a child keeps the limits it
	// was started with).
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: 1 << 20, Max: old.Max}); err != nil {
		t.Fatal(err)
	}
	s := startKubeevents(t, "watch", "cm", "-n", ns, "-o", "json", "--sink", "store="+db, "-v=1")
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	s.waitStderr(20*time.Second, literal("watching"))
	const n, rounds = 10, 10
	churnConfigMaps(t, ns, n, rounds, 20<<10) // 110 versions of 20 KiB: 2 MB
	for i := range n {
		name := fmt.Sprintf("churn-%d", i)
		s.waitJSON(eventWait, name+"'s last version on the screen", func(ev envelope) bool {
			return ev.name() == name && strings.Contains(string(ev.Object), fmt.Sprintf(`"round":"%d"`, rounds))
		})
	}
	// Said at once, with no event after: a commit that fails while events pause (the
	// idle commit) too.
	failed := regexp.MustCompile(`(?m)^kubeevents: .*` + regexp.QuoteMeta(db) + `.*file size limit.*$`)
	s.waitStderr(30*time.Second, failed)
	_, code := s.interrupt(20 * time.Second)
	if code != 4 {
		t.Errorf("exit %d, want 4 (a sink failed); stderr:\n%s", code, s.Stderr())
	}
	if lines := failed.FindAllString(s.Stderr(), -1); len(lines) != 1 {
		t.Errorf("the store's failure said %d times, want once; stderr:\n%s", len(lines), s.Stderr())
	}
	info := runKubeevents(t, 30*time.Second, "store", "info", db)
	if info.code != 0 { // what was committed before the failure, perhaps nothing
		t.Errorf("store info after the failure: exit %d\n%s%s", info.code, info.stdout, info.stderr)
	}
}
