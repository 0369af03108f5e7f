package httpsink

import (
	"testing"

	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/sink"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
)

// An http sink under a policy that loses nothing retries until its receiver answers,
// unless it sets retries; under the others it gives up after DefaultRetries.
func TestRetriesFollowThePolicy(t *testing.T) {
	three := 3
	for _, tc := range []struct {
		policy  listener.Policy
		retries *int
		want    int
	}{
		{listener.Policy{}, nil, sink.RetryForever},
		{listener.Block, nil, sink.RetryForever},
		{listener.Coalesce, nil, sink.RetryForever},
		{listener.DropOldest, nil, DefaultRetries},
		{listener.DropNewest, nil, DefaultRetries},
		{listener.Block, &three, 3},
		{listener.DropOldest, &three, 3},
	} {
		s := &Settings{}
		s.Retries = tc.retries
		if got := retries(sinkkind.Spec{Kind: Kind, Settings: s, OnFull: tc.policy}); got != tc.want {
			t.Errorf("on-full=%q, retries %v: %d retries, want %d", tc.policy, tc.retries, got, tc.want)
		}
	}
}
