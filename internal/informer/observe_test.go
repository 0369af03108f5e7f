package informer

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/resource"
)

// observed records what an Observer is told.
type observed struct{ said []string }

func (o *observed) Made(ev *event.Event)            { o.said = append(o.said, "made "+string(ev.Type)) }
func (o *observed) WatchLost(res resource.Resource) { o.said = append(o.said, "lost "+res.String()) }
func (o *observed) WatchBack(res resource.Resource, after time.Duration, relisted bool) {
	o.said = append(o.said, fmt.Sprintf("back %s after %s, relisted %v", res, after, relisted))
}

// The observer is told once when a watch is lost, and once when it is back: after the
// re-list, or when the re-opened watch stayed up (resumed), with how long it was lost.
// It is told before stderr says so, so that whoever reads the line and then scrapes the
// metrics finds the outage counted.
func TestObserverSeesOutages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cms := resource.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespaced: true}
		refused := &url.Error{Op: "Get", URL: "https://127.0.0.1:6443/api/v1/configmaps",
			Err: &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}}
		var errs []error
		next := func() error {
			if len(errs) == 0 {
				return nil
			}
			e := errs[0]
			errs = errs[1:]
			return e
		}
		obs := &observed{}
		store := cache.NewStore(cache.MetaNamespaceKeyFunc)
		w := &watchReporter{
			inner: &cache.ListWatch{
				ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
					if err := next(); err != nil {
						return nil, err
					}
					return &corev1.ConfigMapList{}, nil
				},
				WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
					if err := next(); err != nil {
						return nil, err
					}
					return watch.NewEmptyWatch(), nil
				},
			},
			resource: cms,
			store:    func() cache.Store { return store },
			warn: func(format string, args ...any) {
				obs.said = append(obs.said, "said "+strings.SplitN(fmt.Sprintf(format, args...), " (", 2)[0])
			},
			fatal:    func(err error) { t.Errorf("fatal: %v", err) },
			watching: true,
			observer: obs,
		}
		// Down for 3s, then a re-list.
		errs = []error{refused}
		_, _ = w.WatchWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "5"})
		time.Sleep(time.Second)
		errs = []error{refused}
		_, _ = w.ListWithContext(context.Background(), metav1.ListOptions{})
		time.Sleep(2 * time.Second)
		_, _ = w.ListWithContext(context.Background(), metav1.ListOptions{})
		// Down again, then the watch re-opens and stays up: resumed after resumeQuiet.
		errs = []error{refused}
		_, _ = w.WatchWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "6"})
		time.Sleep(time.Second)
		_, _ = w.WatchWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "6"})
		time.Sleep(resumeQuiet)
		synctest.Wait()
		want := []string{
			"lost configmaps", "said watch of configmaps lost",
			"back configmaps after 3s, relisted true", "said re-synced 0 configmaps",
			"lost configmaps", "said watch of configmaps lost",
			"back configmaps after 3s, relisted false", "said watch of configmaps resumed; no events were missed",
		}
		if fmt.Sprint(obs.said) != fmt.Sprint(want) {
			t.Errorf("observer was told\n%q\nwant\n%q", obs.said, want)
		}
	})
}
