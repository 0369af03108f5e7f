package informer

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/resource"
)

// TestAPIErrorThrottled: a 429 that outlasted client-go's retries is said in kubeevents'
// words (the same as during a watch), naming the call, not client-go's "has asked us to
// try again later".
func TestAPIErrorThrottled(t *testing.T) {
	cms := resource.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespaced: true}
	err := APIError(apierrors.NewTooManyRequests("too many requests, please try again later", 1), "list", cms)
	msg := err.Error()
	for _, want := range []string{"throttled by the API server: 429 Too Many Requests", "the list of configmaps", "try again later"} {
		if !strings.Contains(msg, want) {
			t.Errorf("APIError(429) = %q, want it to say %q", msg, want)
		}
	}
	if strings.Contains(msg, "has asked us") {
		t.Errorf("APIError(429) = %q: client-go's words, not kubeevents'", msg)
	}
}
