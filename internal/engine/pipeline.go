package engine

import (
	"path"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/pipeline"
	"github.com/kubeevents/kubeevents/internal/transition"
)

// pipeline is the path every event of the run takes, in order: the steps below, from
// what a source hands over to what each listener is given. A step whose feature the run
// does not have is nil, and left out. Each records what it decides in the event's own
// fields (package pipeline); one that leaves an event out says why (event.LeftOut), and
// no later step, no sink, no limit and no number is spent on it.
func (r *run) pipeline() *pipeline.Pipeline {
	cfg := r.cfg
	var observe, fold, checkpoint pipeline.Stage
	if cfg.Observer != nil {
		observe = pipeline.StageFunc(cfg.Observer.Made)
	}
	if cfg.Folder != nil {
		fold = pipeline.StageFunc(cfg.Folder.Made)
	}
	if r.checkpoint != nil {
		checkpoint = r.checkpoint
	}
	return pipeline.New(
		// Which objects the run follows, and what is known of them (SYNC events too):
		// core Events about the watched objects (--with-events, past ones marked), and
		// the followed object's tree with each one's owner chain (--owned).
		pipeline.Step{Name: "related", Stage: r.relatedStage(), Sync: true},
		pipeline.Step{Name: "owners", Stage: r.ownedStage(), Sync: true},
		// What happened in the change (--on, the sinks' on=), and whether it is news
		// (--event-types, --exclude-namespace's patterns, --by, --on, --changes-only).
		pipeline.Step{Name: "transitions", Stage: transitionsStage(cfg.Transitions)},
		pipeline.Step{Name: "filter", Stage: r.filterStage()},
		// Its number, and whether it ends the stream (--until*, --max-events): one event
		// at a time, so that none is numbered after the last.
		pipeline.Step{Name: "number", Stage: r.seq.Number(), Ordered: true},
		pipeline.Step{Name: "conditions", Stage: r.seq.Condition(r.conditionMetBy()), Ordered: true},
		pipeline.Step{Name: "limit", Stage: r.seq.Limit(cfg.MaxEvents), Ordered: true},
		// Who follows the stream: the metrics, each cluster's count, the checkpoint (each
		// event to its delivery by every sink), and the rollouts the folding sinks fold.
		pipeline.Step{Name: "metrics", Stage: observe},
		pipeline.Step{Name: "clusters", Stage: r.clustersStage()},
		pipeline.Step{Name: "checkpoint", Stage: checkpoint},
		pipeline.Step{Name: "fold", Stage: fold},
		// Every listener (a SYNC only those whose resync period came), each through a
		// lane of its own.
		pipeline.Step{Name: "deliver", Stage: r.deliver, Sync: true},
	)
}

// conditionMetBy is the conditions step's question (nil without a condition).
func (r *run) conditionMetBy() func(*event.Event) bool {
	if r.conditions == nil {
		return nil
	}
	return r.conditions.metBy
}

// ownedStage keeps the objects of --owned's tree, and says each one's owner chain and
// rollout (nil without --owned). Core Events are the related step's.
func (r *run) ownedStage() pipeline.Stage {
	o := r.cfg.Owned
	if o == nil {
		return nil
	}
	root := o.Tree.AcceptRoot(o.RootKind, r.cfg.Watch.Names[0])
	children := map[string]func(any) bool{}
	for _, c := range o.Children {
		children[c.Resource.GVK.Kind] = o.Tree.Accept(c.Resource.GVK.Kind)
	}
	return pipeline.StageFunc(func(ev *event.Event) {
		if ev.Related {
			return
		}
		accept := root
		if ev.Child {
			accept = children[ev.Kind]
		}
		if accept == nil || !accept(ev.Object) {
			ev.LeftOut = event.LeftOutUnfollowed
			return
		}
		o.Tree.Annotate(ev)
	})
}

// relatedStage keeps the core Events about the objects watched (--with-events; nil
// without): those of --owned's tree, else those whose object is in a watched type's
// cache. Past ones (--since, or since the checkpoint) wait for the watched types' first
// lists, are marked past with the time they last happened, and are left out when older.
func (r *run) relatedStage() pipeline.Stage {
	if !r.cfg.WithEvents || r.cfg.Source != nil {
		return nil
	}
	accepts := map[string]func(any) bool{}
	listed := map[string]<-chan struct{}{}
	for _, c := range r.clusters {
		accepts[c.Name] = involvesWatched(c.watchedAndOwned())
		if r.cfg.Owned != nil {
			accepts[c.Name] = r.cfg.Owned.Tree.AcceptEvent
		}
		if !r.pastEventsSince(c).IsZero() {
			listed[c.Name] = c.watchedListed(r.stopping)
		}
	}
	return pipeline.StageFunc(func(ev *event.Event) {
		if !ev.Related {
			return
		}
		if ev.InInitialList {
			// A past Event: what it is about must be known first.
			select {
			case <-listed[ev.Cluster]:
			case <-r.stopping:
				ev.LeftOut = event.LeftOutOver
				return
			}
		}
		if !accepts[ev.Cluster](ev.Object) {
			ev.LeftOut = event.LeftOutUnfollowed
			return
		}
		if r.cfg.Owned != nil {
			r.cfg.Owned.Tree.Annotate(ev)
		}
		if ev.InInitialList {
			ev.Past = true
			if core, ok := ev.Object.(*corev1.Event); ok {
				ev.Time = lastHappened(core)
			}
		}
	})
}

// transitionsStage says in each event which of the run's transitions happened in it
// (nil when the run names none).
func transitionsStage(set *transition.Set) pipeline.Stage {
	if set == nil {
		return nil
	}
	return pipeline.StageFunc(func(ev *event.Event) { ev.On = set.Eval(ev) })
}

// filterStage leaves out what is not news, before it is numbered: events of other types
// than --event-types (SYNC is the listeners' resync's, or not), of namespaces matching an
// excluded pattern, made by none of --by's managers (or by --not-by's), in which none
// of --on's transitions happened, past core Events older than --since, and, last (it
// counts what it leaves out), updates that changed nothing beyond the ignored paths.
// Nil when none applies.
func (r *run) filterStage() pipeline.Stage {
	cfg := r.cfg
	var wanted map[event.EventType]bool
	if len(cfg.EventTypes) > 0 {
		wanted = map[event.EventType]bool{}
		for _, t := range cfg.EventTypes {
			wanted[t] = true
		}
	}
	var patterns []string
	for _, ns := range cfg.Watch.ExcludeNamespaces {
		if isPattern(ns) {
			patterns = append(patterns, ns)
		}
	}
	byManager := cfg.By.Skip(cfg.Differ)
	// Past core Events are kept from when --since, or the checkpoint, says: per cluster.
	since := map[string]time.Time{}
	if cfg.WithEvents && cfg.Source == nil {
		for _, c := range r.clusters {
			if t := r.pastEventsSince(c); !t.IsZero() {
				since[c.Name] = t
			}
		}
	}
	pastSince := func(ev *event.Event) bool {
		t, ok := since[ev.Cluster]
		return ok && ev.Past && ev.Time.Before(t)
	}
	if wanted == nil && patterns == nil && byManager == nil && len(cfg.On) == 0 && !cfg.ChangesOnly && len(since) == 0 {
		return nil
	}
	return pipeline.StageFunc(func(ev *event.Event) {
		switch {
		case wanted != nil && !wanted[ev.Type]:
			ev.LeftOut = event.LeftOutEventType
		case patterns != nil && excludedNamespace(ev, patterns):
			ev.LeftOut = event.LeftOutNamespace
		case pastSince(ev):
			ev.LeftOut = event.LeftOutPast
		case byManager != nil && byManager(ev):
			ev.LeftOut = event.LeftOutBy
		case len(cfg.On) > 0 && !slices.ContainsFunc(ev.On, func(name string) bool { return slices.Contains(cfg.On, name) }):
			ev.LeftOut = event.LeftOutOn
		case cfg.ChangesOnly && ev.Type == event.Modified && cfg.Differ.Unchanged(ev):
			ev.LeftOut = event.LeftOutUnchanged
		}
	})
}

// excludedNamespace reports whether ev's object is in a namespace matching one of the
// patterns (path.Match, as checked by the command).
func excludedNamespace(ev *event.Event, patterns []string) bool {
	m := ev.Meta()
	if m == nil || m.GetNamespace() == "" {
		return false
	}
	for _, p := range patterns {
		if ok, _ := path.Match(p, m.GetNamespace()); ok {
			return true
		}
	}
	return false
}

// clustersStage counts each cluster's events, when there are several (nil with one).
func (r *run) clustersStage() pipeline.Stage {
	if !r.cfg.Several {
		return nil
	}
	return pipeline.StageFunc(func(ev *event.Event) {
		if c := r.clusterNamed(ev.Cluster); c != nil {
			c.made.Add(1)
		}
	})
}

// clusterNamed is the watched cluster called name.
func (r *run) clusterNamed(name string) *clusterRun {
	for _, c := range r.allClusters {
		if c.Name == name {
			return c
		}
	}
	return nil
}
