package engine

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubeevents/kubeevents/internal/crashcontext"
	"github.com/kubeevents/kubeevents/internal/episode"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/filter"
	"github.com/kubeevents/kubeevents/internal/pipeline"
	"github.com/kubeevents/kubeevents/internal/plan"
	"github.com/kubeevents/kubeevents/internal/related"
)

// pipeline is the path every event of the run takes, in order: the steps below, from
// what a source hands over to what each listener is given. A step whose feature the run
// does not have is nil, and left out. Each records what it decides in the event's own
// fields (package pipeline); one that leaves an event out says why (event.LeftOut), and
// no later step, no sink, no limit and no number is spent on it.
func (r *run) pipeline() *pipeline.Pipeline {
	cfg := r.cfg
	var steps []pipeline.Step
	add := func(step pipeline.Step, present bool) {
		if present {
			steps = append(steps, step)
		}
	}
	// Which objects the run follows, and what is known of them (SYNC events too): core
	// Events about the watched objects (--with-events, past ones marked), and the
	// followed object's tree, with each one's owner chain and rollout (--owned).
	if cfg.Events.WithEvents && r.source == nil {
		add(pipeline.Step{Name: "related", Stage: r.relatedStage(), Sync: true}, true)
	}
	add(pipeline.Step{Name: "owners", Stage: r.follow, Sync: true}, r.follow != nil)
	// How each object is doing, when the run reads it (package health).
	add(pipeline.Step{Name: "health", Stage: r.health, Sync: true}, r.health != nil)
	// What happened in the change (--on, the sinks' on=), and whether it is news
	// (--event-types, --exclude-namespace's patterns, --by, --on, --changes-only).
	add(pipeline.Step{Name: "transitions", Stage: pipeline.StageFunc(func(ev *event.Event) { ev.On = cfg.Events.Transitions.Eval(ev) })},
		cfg.Events.Transitions != nil)
	filterStep := filter.New(filter.Config{EventTypes: cfg.Events.Types, ExcludeNamespaces: cfg.Watch.ExcludeNamespaces,
		By: cfg.Events.By, On: cfg.Events.On, ChangesOnly: cfg.Events.ChangesOnly, Differ: cfg.Output.Differ})
	add(pipeline.Step{Name: "filter", Stage: filterStep}, filterStep != nil)
	// Its number, and whether it ends the stream (--until*, --max-events): one event at
	// a time, so that none is numbered after the last.
	add(pipeline.Step{Name: "number", Stage: r.seq.Number(), Ordered: true}, true)
	add(pipeline.Step{Name: "conditions", Stage: r.seq.Condition(r.conditionMetBy()), Ordered: true}, r.conditions != nil)
	add(pipeline.Step{Name: "limit", Stage: r.seq.Limit(cfg.End.MaxEvents), Ordered: true}, cfg.End.MaxEvents > 0)
	// Who follows the stream: the metrics, each cluster's count, the checkpoint (each
	// event to its delivery by every sink), and the rollouts the folding sinks fold.
	add(pipeline.Step{Name: "metrics", Stage: pipeline.StageFunc(func(ev *event.Event) { r.observer.Made(ev) })}, r.observer != nil)
	add(pipeline.Step{Name: "clusters", Stage: pipeline.StageFunc(func(ev *event.Event) { r.watch.Count(ev) })}, r.several)
	add(pipeline.Step{Name: "checkpoint", Stage: r.resume}, r.resume != nil)
	add(pipeline.Step{Name: "fold", Stage: pipeline.StageFunc(func(ev *event.Event) { r.folder.Made(ev) })}, r.folder != nil)
	// Which sinks' episodes the event opens, updates or goes on in (package episode),
	// and what the crash it tells of left behind (package crashcontext).
	episodes := r.episodeStep()
	add(pipeline.Step{Name: "episodes", Stage: episodes}, episodes != nil)
	crashes := r.crashStep()
	add(pipeline.Step{Name: "crash context", Stage: crashes}, crashes != nil)
	// Every listener (a SYNC only those whose resync period came), each through a lane
	// of its own.
	add(pipeline.Step{Name: "deliver", Stage: r.deliver, Sync: true}, true)
	p := pipeline.New(steps...)
	if episodes != nil {
		episodes.EmitTo(p.From("episodes"))
	}
	return p
}

// episodeStep is the episodes step (nil: no sink has episodes), with what the checkpoint
// kept of them, a part of the run (its clock) and of the checkpoint.
func (r *run) episodeStep() *episode.Step {
	lookups := map[string]episode.Lookup{}
	for _, c := range r.clusters {
		lookups[c.Name] = episode.MetadataLookup(c.Clients.Metadata)
	}
	s := episode.New(episode.Config{Sinks: r.cfg.Events.Episodes, Opposites: r.cfg.Events.Opposites, Lookups: lookups,
		Listeners: len(r.listeners), Persist: r.resume != nil, Warn: r.hooks.warn})
	if s == nil {
		return nil
	}
	if r.resume != nil {
		for _, c := range r.clusters {
			if err := s.Restore(c.Name, r.resume.Episodes(c.Name)); err != nil {
				r.hooks.warn("--resume: %v; its episodes start afresh", err)
			}
		}
		r.resume.KeepEpisodes(s.Save)
	}
	r.parts = append(r.parts, s)
	return s
}

// crashStep is the crash context step (nil: none), fetching through each cluster's
// client.
func (r *run) crashStep() *crashcontext.Stage {
	if r.cfg.Events.CrashContext == nil {
		return nil
	}
	clients := map[string]kubernetes.Interface{}
	for _, c := range r.clusters {
		if c.Clients.TypedREST == nil {
			continue
		}
		if core, err := c.Clients.TypedREST(corev1.SchemeGroupVersion); err == nil {
			clients[c.Name] = kubernetes.New(core)
		}
	}
	plain := len(r.cfg.Events.Episodes) < len(r.listeners) || slices.Contains(r.cfg.Events.Episodes, nil)
	warn := r.hooks.warn
	return crashcontext.NewStage(clients, *r.cfg.Events.CrashContext, plain, func(cluster, line string) {
		if r.several {
			line = fmt.Sprintf(plan.ClusterNotice+"%s", cluster, line)
		}
		warn("%s", line)
	})
}

// conditionMetBy is the conditions step's question (nil without a condition).
func (r *run) conditionMetBy() func(*event.Event) bool {
	if r.conditions == nil {
		return nil
	}
	return r.conditions.MetBy
}

// relatedStage keeps the core Events about the objects watched (package related).
func (r *run) relatedStage() pipeline.Stage {
	var follow related.Follow
	if r.follow != nil {
		follow = r.follow.Tree
	}
	return related.NewStage(r.watch.Related(), follow, r.stopping)
}
