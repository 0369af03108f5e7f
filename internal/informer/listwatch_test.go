package informer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeevents/kubeevents/internal/resource"
)

// TestOutageCauseChanges: during one outage, each change of what it is down to (the
// server refuses connections, then refuses these credentials' rights, then the
// credentials themselves) is said once, in words a user acts on; repeats are not.
func TestOutageCauseChanges(t *testing.T) {
	pods := resource.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespaced: true}
	refused := &url.Error{Op: "Get", URL: "https://127.0.0.1:6443/api/v1/namespaces/ns/pods",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "",
		errors.New(`User "system:serviceaccount:ns:watcher" cannot list resource "pods" in API group "" in the namespace "ns"`))
	unauthorized := apierrors.NewUnauthorized("Unauthorized")

	var errs []error
	next := func() error { e := errs[0]; errs = errs[1:]; return e }
	var said []string
	w := &watchReporter{
		inner: &cache.ListWatch{
			ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) { return nil, next() },
			WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
				return nil, next()
			},
		},
		resource: pods,
		warn:     func(format string, args ...any) { said = append(said, fmt.Sprintf(format, args...)) },
		fatal:    func(err error) { t.Errorf("fatal after the first watch: %v", err) },
		watching: true, // the first watch was established: from now on errors are retried
	}
	// The reflector's retries, as after `hack/cluster.sh restart-apiserver` once the
	// RoleBinding was deleted, and then the ServiceAccount.
	errs = []error{refused, refused, refused, forbidden, forbidden, forbidden, unauthorized, unauthorized, refused}
	_, _ = w.WatchWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "5"})
	for len(errs) > 0 {
		_, _ = w.ListWithContext(context.Background(), metav1.ListOptions{})
	}
	want := []string{
		"watch of pods lost (connection refused); retrying…",
		`watch of pods still lost, now forbidden: user "system:serviceaccount:ns:watcher" cannot list resource "pods" in API group "" in the namespace "ns" (kubeevents needs list and watch rights; ask your cluster admin or use another --context); retrying…`,
		"watch of pods still lost, now unauthorized: the API server rejected the credentials (expired or wrong token or certificate?); check --kubeconfig, --context and --token; retrying…",
		"watch of pods still lost, now connection refused; retrying…",
	}
	if strings.Join(said, "\n") != strings.Join(want, "\n") {
		t.Errorf("said:\n%s\nwant:\n%s", strings.Join(said, "\n"), strings.Join(want, "\n"))
	}

	// A watch that just dropped is re-listed with no cause known yet: that the server is
	// then unreachable is no news, but that it refuses the rights is.
	said = nil
	w.lost = false
	errs = []error{refused, forbidden}
	_, _ = w.ListWithContext(context.Background(), metav1.ListOptions{})
	_, _ = w.ListWithContext(context.Background(), metav1.ListOptions{})
	if len(said) != 2 || said[0] != "watch of pods lost; re-listing…" || !strings.HasPrefix(said[1], "watch of pods still lost, now forbidden: ") {
		t.Errorf("after a dropped watch, said:\n%s", strings.Join(said, "\n"))
	}
}

// A watch whose stream could not be read because its connection was lost is told from
// one that could not be decoded, and from the server's own errors.
func TestConnectionLost(t *testing.T) {
	reporter := apierrors.NewClientErrorReporter(http.StatusInternalServerError, http.MethodGet, "ClientWatchDecoding")
	for _, c := range []struct {
		status runtime.Object
		want   bool
	}{
		{reporter.AsObject(errors.New("unable to decode an event from the watch stream: http2: client connection lost")), true},
		{reporter.AsObject(errors.New("unable to decode an event from the watch stream: read tcp 127.0.0.1:1->127.0.0.1:2: read: connection timed out")), true},
		{reporter.AsObject(errors.New("unable to decode an event from the watch stream: proto: illegal wireType 7")), false},
		{&apierrors.NewInternalError(errors.New("http2: client connection lost")).ErrStatus, false},
		{&apierrors.NewResourceExpired("too old resource version").ErrStatus, false},
	} {
		if got := connectionLost(c.status); got != c.want {
			t.Errorf("connectionLost(%v) = %v, want %v", c.status, got, c.want)
		}
	}
}
