package health

import (
	"context"
	"embed"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/catalog"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/jq"
	"github.com/kubeevents/kubeevents/internal/listener"
)

// A health rule teaches kubeevents one kind's health where kstatus does not know it: a
// jq program over the event's envelope (as transitions see it: .object is the object)
// that gives {"status": S, "message": M} (S one of Statuses; a string alone is a status
// without a message), or null or nothing to leave the object to kstatus. It may also say
// which types the kind's controller creates (Owns: watched for its children by --owned).
//
// Rules are keyed by KIND.GROUP ("Rollout.argoproj.io"; "Pod" for the core group), or
// "*": every custom resource (an object of a type client-go does not know) that has no
// rule of its own. The shipped ones (shipped/*.jq) are written from the documented status
// fields of their kinds; the config file's `health:` adds kinds, or replaces shipped
// rules by key.

//go:embed shipped/*.jq
var shippedFiles embed.FS

// AnyCustomResource is the key of the rule for every custom resource without one of its
// own.
const AnyCustomResource = "*"

// shipped are the shipped rules: key, file and the types the kind's controller creates.
var shipped = []struct {
	key, file string
	owns      []string
}{
	{"Rollout.argoproj.io", "argo-rollout.jq", []string{"replicasets.apps", "pods", "analysisruns.argoproj.io"}},
	{"Kustomization.kustomize.toolkit.fluxcd.io", "flux.jq", nil},
	{"HelmRelease.helm.toolkit.fluxcd.io", "flux.jq", nil},
	{"Certificate.cert-manager.io", "cert-manager-certificate.jq", []string{"certificaterequests.cert-manager.io", "orders.acme.cert-manager.io", "challenges.acme.cert-manager.io"}},
	{"Application.argoproj.io", "argo-cd-application.jq", nil},
	{"Job.batch", "job.jq", nil},
	{AnyCustomResource, "synced.jq", nil},
}

// Rule is one kind's rule as the config file (or a shipped file) gives it.
type Rule struct {
	// Program is the jq program ("" for a rule that only says what the kind owns).
	Program string
	// Owns are the types (as `kubectl get` takes them) the kind's controller creates.
	Owns []string
}

// Entry is a rule of the catalog, as `kubeevents health` lists it.
type Entry struct {
	Key string
	Rule
	Description string // the program's first comment line
	Shipped     bool
}

// CheckKey reports a key no rule can have: KIND.GROUP, KIND for the core group, or "*".
func CheckKey(key string) error {
	if key == AnyCustomResource {
		return nil
	}
	gk := schema.ParseGroupKind(key)
	if gk.Kind == "" || strings.ContainsAny(key, " /,*") || gk.Kind[0] < 'A' || gk.Kind[0] > 'Z' {
		return fmt.Errorf("health rule %q: give the kind as KIND.GROUP (Rollout.argoproj.io), KIND for the core group (Pod), or * for every custom resource", key)
	}
	return nil
}

// Catalog is the rules a run knows: the shipped ones, and the config file's.
type Catalog struct {
	list []Entry
}

// NewCatalog is the shipped rules with the user's (by key) added, or replacing shipped
// ones of the same key; a key that cannot be is an error.
func NewCatalog(user map[string]Rule) (*Catalog, error) {
	c := &Catalog{}
	for _, s := range shipped {
		src, err := shippedFiles.ReadFile("shipped/" + s.file)
		if err != nil {
			return nil, err
		}
		c.list = append(c.list, Entry{Key: s.key, Rule: Rule{Program: string(src), Owns: s.owns},
			Description: catalog.Description(string(src)), Shipped: true})
	}
	keys := make([]string, 0, len(user))
	for k := range user {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := CheckKey(k); err != nil {
			return nil, err
		}
		e := Entry{Key: k, Rule: user[k], Description: catalog.Description(user[k].Program)}
		if i := slices.IndexFunc(c.list, func(s Entry) bool { return s.Key == k }); i >= 0 {
			c.list[i] = e
			continue
		}
		c.list = append(c.list, e)
	}
	return c, nil
}

// List is every rule, the shipped ones first.
func (c *Catalog) List() []Entry { return slices.Clone(c.list) }

// Rules are a catalog's programs, compiled: what the health step runs.
type Rules struct {
	byKind map[schema.GroupKind]*compiled
	any    *compiled
	owns   map[schema.GroupKind][]string

	mu       sync.Mutex
	warn     func(format string, args ...any)
	notice   listener.Throttle
	failures int
}

type compiled struct {
	key   string
	query *jq.Query
}

// Compile compiles every rule's program; one that does not compile is an error naming
// its key.
func (c *Catalog) Compile() (*Rules, error) {
	r := &Rules{byKind: map[schema.GroupKind]*compiled{}, owns: map[schema.GroupKind][]string{},
		warn: func(string, ...any) {}, notice: listener.Throttle{Period: listener.NoticeEvery}}
	for _, e := range c.list {
		var q *jq.Query
		if strings.TrimSpace(e.Program) != "" {
			var err error
			if q, err = jq.Compile(e.Program); err != nil {
				return nil, fmt.Errorf("health rule %q: %v", e.Key, err)
			}
		}
		if e.Key == AnyCustomResource {
			if q != nil {
				r.any = &compiled{key: e.Key, query: q}
			}
			continue
		}
		gk := schema.ParseGroupKind(e.Key)
		if q != nil {
			r.byKind[gk] = &compiled{key: e.Key, query: q}
		}
		if len(e.Owns) > 0 {
			r.owns[gk] = e.Owns
		}
	}
	return r, nil
}

// WarnTo says where failing programs are reported from now on.
func (r *Rules) WarnTo(warn func(format string, args ...any)) {
	if warn != nil {
		r.warn = warn
	}
}

// Owns are the types kind's rule says its controller creates; nil when it says none.
func (r *Rules) Owns(kind schema.GroupKind) []string {
	if r == nil {
		return nil
	}
	return r.owns[kind]
}

// rule is the rule for ev's object, nil if none applies.
func (r *Rules) rule(ev *event.Event) *compiled {
	if r == nil {
		return nil
	}
	if c := r.byKind[schema.GroupKind{Group: ev.Resource.Group, Kind: ev.Kind}]; c != nil {
		return c
	}
	if _, custom := ev.Object.(*unstructured.Unstructured); custom && r.any != nil {
		return r.any
	}
	return nil
}

// Eval runs the rule for ev's object: ok is false when there is none, or it left the
// object to kstatus. A program that fails, or gives what is no health, makes it
// Unknown, said at most once per listener.NoticeEvery.
func (r *Rules) Eval(ev *event.Event) (h event.Health, ok bool) {
	c := r.rule(ev)
	if c == nil {
		return h, false
	}
	input, err := c.query.Input(ev, nil, false)
	var outs []any
	if err == nil {
		outs, err = c.query.Run(context.Background(), input)
	}
	if err == nil {
		for _, out := range outs {
			if out == nil {
				continue
			}
			if h, err = healthOf(out); err == nil {
				return h, true
			}
			break
		}
		if err == nil {
			return h, false
		}
	}
	r.failed(ev, c.key, err)
	return event.Health{Status: event.HealthUnknown, Message: fmt.Sprintf("health rule %s: %v", c.key, err)}, true
}

// healthOf reads a rule's output: {"status": S, "message": M}, or S alone.
func healthOf(v any) (event.Health, error) {
	var h event.Health
	switch v := v.(type) {
	case string:
		h.Status = event.HealthStatus(v)
	case map[string]any:
		s, _ := v["status"].(string)
		h.Status = event.HealthStatus(s)
		switch m := v["message"].(type) {
		case string:
			h.Message = m
		case nil:
		default:
			return h, fmt.Errorf("gave a message that is not a string: %v", m)
		}
	default:
		return h, fmt.Errorf("gave %v, not {\"status\": ..., \"message\": ...}", v)
	}
	if !slices.Contains(Statuses, h.Status) {
		return h, fmt.Errorf("gave the status %q; want one of %s", h.Status, statusList())
	}
	return h, nil
}

func statusList() string {
	names := make([]string, len(Statuses))
	for i, s := range Statuses {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

func (r *Rules) failed(ev *event.Event, key string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures++
	if !r.notice.Allow(time.Now()) {
		return
	}
	more := ""
	if r.failures > 1 {
		more = fmt.Sprintf(" (%d failures so far)", r.failures)
	}
	r.warn("health rule %q: %v on %s %s; its health is Unknown%s", key, err, ev.Kind, ev.Key(), more)
}
