// Package timetravel runs the commands that read and fill a history store (package
// store): kubeevents store import and store info, get --at, and history --store.
// Their command-line parts (cmd/) turn flags into the configs here.
package timetravel

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/replay"
	"github.com/kubeevents/kubeevents/internal/store"
)

// ParseTime reads a point in time as the user gives it: RFC 3339
// (2026-11-23T14:05:00Z), or a duration before now (10m, 2h ago, 1h30m).
func ParseTime(flag, value string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, value); err == nil {
		return t, nil
	}
	ago := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(value), "ago"))
	if d, err := time.ParseDuration(ago); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, diag.Usagef("%s %q: give an RFC 3339 time (2026-11-23T14:05:00Z) or how long ago (10m, 2h ago)", flag, value)
}

// openStore opens a store for reading; a file that is not one is bad input.
func openStore(ctx context.Context, path string) (*store.Reader, error) {
	if path == "" {
		return nil, diag.Usagef("no store given: --store FILE, or store: in the config file")
	}
	r, err := store.Open(ctx, path)
	var notStore *store.NotStoreError
	if errors.As(err, &notStore) {
		return nil, diag.Usage(err)
	}
	if err != nil {
		return nil, diag.Usage(err) // no such file, a directory, no permission
	}
	return r, nil
}

// resolveTypes are the store's resources that the types as typed name, in their
// order, each once. A type the store holds nothing of is bad input that says what it
// holds.
func resolveTypes(r *store.Reader, types []string) ([]*store.Resource, error) {
	var out []*store.Resource
	for _, t := range types {
		found := false
		for _, res := range r.Resources() {
			if replay.MatchType(t, res.GroupVersionResource, res.Kind) {
				found = true
				if !containsResource(out, res) {
					out = append(out, res)
				}
			}
		}
		if !found && !strings.EqualFold(t, "all") {
			return nil, diag.Usagef("%s: the store %s holds no such type (it holds %s)", t, r.Path(), heldTypes(r))
		}
	}
	return out, nil
}

func containsResource(list []*store.Resource, res *store.Resource) bool {
	for _, r := range list {
		if r == res {
			return true
		}
	}
	return false
}

func heldTypes(r *store.Reader) string {
	var names []string
	for _, res := range r.Resources() {
		names = append(names, resourceName(res))
	}
	if len(names) == 0 {
		return "nothing yet"
	}
	return strings.Join(names, ", ")
}

// resourceName is the resource as kubectl names it: pods, deployments.apps.
func resourceName(res *store.Resource) string {
	if res.Group == "" {
		return res.Resource
	}
	return res.Resource + "." + res.Group
}

// kindName is what kubectl puts before an object's name: pod, deployment.apps.
func kindName(res *store.Resource) string {
	kind := strings.ToLower(res.Kind)
	if res.Group == "" {
		return kind
	}
	return kind + "." + res.Group
}

func formatTime(t time.Time) string { return t.Local().Format(time.RFC3339) }

func plural(n int, word string) string {
	return fmt.Sprintf("%s %s%s", diag.Count(n), word, diag.Plural(n))
}
