// Command plaininformer is the memory baseline of `make bench-mem`: a plain client-go
// dynamic shared informer, no transform (managedFields and everything else are cached as
// the server sends them), printing each event as one compact JSON line
// {"type":"ADDED","object":{...}} on stdout.
//
//	plaininformer -kubeconfig K -n NS [-resource pods|GROUP/VERSION/RESOURCE]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubeevents/kubeevents/bench/internal/clientflags"
)

func main() {
	flags := clientflags.Register(flag.CommandLine, "pods, or GROUP/VERSION/RESOURCE")
	flag.Parse()
	gvr, err := flags.GVR()
	if err != nil {
		fmt.Fprintln(os.Stderr, "plaininformer:", err)
		os.Exit(2)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", flags.Kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "plaininformer:", err)
		os.Exit(1)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "plaininformer:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, flags.Namespace, nil)
	inf := factory.ForResource(gvr).Informer()
	var mu sync.Mutex
	print := func(typ string, obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			if tomb, ok2 := obj.(cache.DeletedFinalStateUnknown); ok2 {
				u, ok = tomb.Obj.(*unstructured.Unstructured)
			}
			if !ok {
				return
			}
		}
		b, err := json.Marshal(struct {
			Type   string         `json:"type"`
			Object map[string]any `json:"object"`
		}{typ, u.Object})
		if err != nil {
			fmt.Fprintln(os.Stderr, "plaininformer:", err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		_, _ = os.Stdout.Write(append(b, '\n'))
	}
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { print("ADDED", obj) },
		UpdateFunc: func(_, obj any) { print("MODIFIED", obj) },
		DeleteFunc: func(obj any) { print("DELETED", obj) },
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "plaininformer:", err)
		os.Exit(1)
	}
	factory.Start(ctx.Done())
	<-ctx.Done()
	factory.Shutdown()
}
