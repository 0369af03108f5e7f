package kubectl

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
)

// TestAppendHumanDurationIsHumanDuration: the allocation-free copy writes what kubectl's
// HumanDuration writes, across every branch.
func TestAppendHumanDurationIsHumanDuration(t *testing.T) {
	for _, d := range []time.Duration{-5 * time.Second, -time.Second, 0, 59 * time.Second, 119 * time.Second, 2 * time.Minute,
		3*time.Minute + 12*time.Second, 9*time.Minute + 59*time.Second, 10 * time.Minute, 179 * time.Minute, 3 * time.Hour,
		7*time.Hour + 59*time.Minute, 8 * time.Hour, 47 * time.Hour, 48 * time.Hour, 50 * time.Hour, 7*24*time.Hour + 23*time.Hour,
		8 * 24 * time.Hour, 729 * 24 * time.Hour, 730 * 24 * time.Hour, 731 * 24 * time.Hour, 9 * 365 * 24 * time.Hour} {
		if got, want := string(appendHumanDuration(nil, d)), duration.HumanDuration(d); got != want {
			t.Errorf("appendHumanDuration(%s) = %q, want %q", d, got, want)
		}
	}
}
