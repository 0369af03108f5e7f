package engine

import (
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/filter"
	"github.com/kubeevents/kubeevents/internal/pipeline"
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
	// Every listener (a SYNC only those whose resync period came), each through a lane
	// of its own.
	add(pipeline.Step{Name: "deliver", Stage: r.deliver, Sync: true}, true)
	return pipeline.New(steps...)
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
