// Command floor is the decode floor of the benchmark: the least a Go client must do to
// follow a watch. It opens the same watch as the clients under test, with client-go, and
// only decodes each event — through the typed clientset (protobuf on the wire, as a client
// that knows the type would) or through the dynamic client (JSON into unstructured maps) —
// then prints one compact line per event:
//
//	{"type":"MODIFIED","name":"bench-00001","rv":"12345","t":1700000000123456789}
//
// t is when the event was decoded (Unix nanoseconds). Like `--watch-only`, it skips the
// objects that exist at start: it lists one object only to learn the current
// resourceVersion, and watches from there (no synthetic ADDED events).
//
//	floor -kubeconfig K -n NS -client typed|dynamic [-resource pods|GROUP/VERSION/RESOURCE]
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubeevents/kubeevents/bench/internal/clientflags"
)

func main() {
	flags := clientflags.Register(flag.CommandLine, "pods, or GROUP/VERSION/RESOURCE (dynamic only)")
	mode := flag.String("client", "typed", "typed (clientset, protobuf) or dynamic (unstructured, JSON)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, flags, *mode); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

// watcher lists (one object, for the resourceVersion) and watches one resource.
type watcher struct {
	list  func(ctx context.Context) (string, error)
	watch func(ctx context.Context, rv string) (watch.Interface, error)
}

func run(ctx context.Context, flags *clientflags.Flags, mode string) error {
	ns := flags.Namespace
	cfg, err := clientcmd.BuildConfigFromFlags("", flags.Kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = -1, 1000
	var w watcher
	switch mode {
	case "typed":
		if flags.Resource != "pods" {
			return fmt.Errorf("-client typed supports -resource pods only")
		}
		cfg.ContentType = runtime.ContentTypeProtobuf
		cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		pods := cs.CoreV1().Pods(ns)
		w.list = func(ctx context.Context) (string, error) {
			l, err := pods.List(ctx, metav1.ListOptions{Limit: 1})
			if err != nil {
				return "", err
			}
			return l.ResourceVersion, nil
		}
		w.watch = func(ctx context.Context, rv string) (watch.Interface, error) {
			return pods.Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
		}
	case "dynamic":
		gvr, err := flags.GVR()
		if err != nil {
			return err
		}
		dyn, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return err
		}
		ri := dyn.Resource(gvr).Namespace(ns)
		w.list = func(ctx context.Context) (string, error) {
			l, err := ri.List(ctx, metav1.ListOptions{Limit: 1})
			if err != nil {
				return "", err
			}
			return l.GetResourceVersion(), nil
		}
		w.watch = func(ctx context.Context, rv string) (watch.Interface, error) {
			return ri.Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
		}
	default:
		return fmt.Errorf("-client %q: use typed or dynamic", mode)
	}

	rv, err := w.list(ctx)
	if err != nil {
		return err
	}
	line := make([]byte, 0, 256)
	for ctx.Err() == nil {
		wi, err := w.watch(ctx, rv)
		if err != nil {
			return err
		}
		rv, err = follow(ctx, wi, rv, &line)
		wi.Stop()
		if err != nil {
			return err
		}
		// The server closed the watch (timeout): go on from the last version seen.
	}
	return nil
}

func follow(ctx context.Context, wi watch.Interface, rv string, line *[]byte) (string, error) {
	for {
		select {
		case <-ctx.Done():
			return rv, nil
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return rv, nil
			}
			now := time.Now().UnixNano()
			if ev.Type == watch.Error {
				err := apierrors.FromObject(ev.Object)
				if status, ok := err.(apierrors.APIStatus); ok && status.Status().Code == http.StatusGone {
					return rv, fmt.Errorf("watch expired (410 Gone) at resourceVersion %s", rv)
				}
				return rv, err
			}
			if ev.Type == watch.Bookmark {
				continue
			}
			acc, err := meta.Accessor(ev.Object)
			if err != nil {
				return rv, err
			}
			rv = acc.GetResourceVersion()
			b := (*line)[:0]
			b = append(b, `{"type":"`...)
			b = append(b, ev.Type...)
			b = append(b, `","name":"`...)
			b = append(b, acc.GetName()...)
			b = append(b, `","rv":"`...)
			b = append(b, rv...)
			b = append(b, `","t":`...)
			b = strconv.AppendInt(b, now, 10)
			b = append(b, "}\n"...)
			*line = b
			if _, err := os.Stdout.Write(b); err != nil {
				return rv, err
			}
		}
	}
}
