package informer

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// Clients are the API clients an informer may use.
type Clients struct {
	// TypedREST returns a client that decodes gv's built-in types into client-go's typed
	// objects (protobuf on the wire). Typed is preferred wherever the type is known:
	// decoding into unstructured maps costs far more CPU (bench/README.md), and typed
	// objects are far smaller in the cache. Nil means every resource goes through Dynamic.
	TypedREST func(gv schema.GroupVersion) (rest.Interface, error)
	Dynamic   dynamic.Interface
	// DynamicREST, where set, serves the watches of the resources that go through
	// Dynamic: JSON events decoded in one pass (decode.WatchUnstructured).
	DynamicREST rest.Interface
	// Metadata serves --metadata-only informers.
	Metadata metadata.Interface
	// probe tells when the server answers again after an outage, one for all the
	// informers of the cluster; nil leaves retries to client-go's backoff.
	probe *serverProbe
	// recovery says which recovery pieces are off (reflector.go).
	recovery Recovery
}

// NewClients builds the three clients from one REST config. They share one HTTP client,
// so their requests and watches share one connection to the server (HTTP/2), whatever
// the config's Dial: client-go caches a transport per config only where Dial is unset.
// recovery says which recovery pieces are off.
func NewClients(config *rest.Config, recovery Recovery) (Clients, error) {
	httpClient, err := rest.HTTPClientFor(config)
	if err != nil {
		return Clients{}, err
	}
	dyn, err := dynamic.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return Clients{}, err
	}
	meta, err := metadata.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return Clients{}, err
	}
	dynCfg := dynamic.ConfigFor(config)
	dynCfg.GroupVersion = nil
	dynREST, err := rest.UnversionedRESTClientForConfigAndClient(dynCfg, httpClient)
	if err != nil {
		return Clients{}, err
	}
	var mu sync.Mutex
	typed := map[schema.GroupVersion]rest.Interface{}
	typedREST := func(gv schema.GroupVersion) (rest.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		if c, ok := typed[gv]; ok {
			return c, nil
		}
		cfg := rest.CopyConfig(config)
		cfg.GroupVersion = &gv
		cfg.APIPath = "/apis"
		if gv.Group == "" {
			cfg.APIPath = "/api"
		}
		cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
		cfg.ContentType = runtime.ContentTypeProtobuf
		cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
		c, err := rest.RESTClientForConfigAndClient(cfg, httpClient)
		if err != nil {
			return nil, fmt.Errorf("client for %s: %w", gv, err)
		}
		typed[gv] = c
		return c, nil
	}
	clients := Clients{TypedREST: typedREST, Dynamic: dyn, DynamicREST: dynREST, Metadata: meta, recovery: recovery}
	if !recovery.NoReadinessProbe {
		clients.probe = newServerProbe(dynREST)
	}
	return clients, nil
}
