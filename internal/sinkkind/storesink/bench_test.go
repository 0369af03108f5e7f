package storesink_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeevents/kubeevents/internal/config"
	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/store"
)

// What the store sink costs an event of a status churn (1,000 realistic pods, each
// kubelet report alternating between ready and not), beside what a file sink's JSON line
// of it costs: issue 44's budget is 1.3x a live watch's CPU per event.
//
//	go test -run '^$' -bench . -benchmem ./internal/sinkkind/storesink/
func BenchmarkStoreSinkWrite(b *testing.B) {
	const pods = 1000
	states := make([][2]*corev1.Pod, pods)
	for i := range states {
		ready := eventtest.RealisticPod()
		ready.Name, ready.UID = fmt.Sprintf("checkout-%04d", i), types.UID(fmt.Sprintf("uid-%04d", i))
		notReady := ready.DeepCopy()
		eventtest.KubeletReport(notReady)
		states[i] = [2]*corev1.Pod{ready, notReady}
	}
	rv := 1000
	next := func(n int) *event.Event {
		i := n % pods
		old, obj := states[i][n/pods%2], states[i][(n/pods+1)%2].DeepCopy()
		rv++
		obj.ResourceVersion = fmt.Sprint(rv)
		obj.Status.Conditions[0].LastProbeTime = metav1.NewTime(eventtest.T0.Add(time.Duration(n) * time.Second))
		return eventtest.Modified(uint64(n+1), eventtest.Pods, "Pod", old, obj)
	}
	b.Run("json-line", func(b *testing.B) {
		d := diff.NewDiffer(nil)
		var line []byte
		n := 0
		for b.Loop() {
			var err error
			if line, err = render.AppendEnvelopeWithDiff(line[:0], next(n), d, false); err != nil {
				b.Fatal(err)
			}
			n++
		}
	})
	// A live watch commits every second (store.BatchInterval): at a kubelet churn's few
	// hundred events a second, a transaction holds a few hundred, not store's 2,000.
	for _, perCommit := range []int{150, 2000} {
		b.Run(fmt.Sprintf("writer-commit-every-%d", perCommit), func(b *testing.B) {
			w, err := store.Create(context.Background(), filepath.Join(b.TempDir(), "events.db"), store.Options{MaxSize: 1 << 30})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close(context.Background())
			d := diff.NewDiffer(nil)
			lines := make([][]byte, 4*pods)
			for n := range lines {
				if lines[n], err = render.AppendEnvelopeWithDiff(nil, next(n), d, false); err != nil {
					b.Fatal(err)
				}
			}
			n := 0
			for b.Loop() {
				if err := w.Write(context.Background(), lines[n%len(lines)]); err != nil {
					b.Fatal(err)
				}
				n++
				if n%perCommit == 0 {
					if err := w.Flush(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
	b.Run("store", func(b *testing.B) {
		spec, err := config.ParseSinkSpec("store=" + filepath.Join(b.TempDir(), "events.db"))
		if err == nil {
			err = spec.Compile(sinkkind.Compiling{})
		}
		if err != nil {
			b.Fatal(err)
		}
		s, err := sinkkind.Build(spec, sinkkind.Env{Differ: diff.NewDiffer(nil)})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		n := 0
		for b.Loop() {
			if err := s.Write(next(n)); err != nil {
				b.Fatal(err)
			}
			n++
		}
	})
}
