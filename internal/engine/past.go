package engine

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// pastEventsSince is from when the core Events about the watched objects that exist at
// start-up are shown, marked past (--with-events): those the API server still keeps of
// the last Config.EventsSince, or, resuming from a checkpoint, those since it was written
// (what happened while kubeevents was down: at least once, to the second). Zero: none,
// only the Events from the start on.
func (r *run) pastEventsSince(c *clusterRun) time.Time {
	if saved := c.resume.Saved; r.cfg.Resume != nil && saved != nil {
		return saved.Written.Truncate(time.Second)
	}
	if r.cfg.EventsSince > 0 {
		return time.Now().Add(-r.cfg.EventsSince)
	}
	return time.Time{}
}

// watchedListed is closed once every watched type's informer of c has its initial list
// (or stop is closed).
func (c *clusterRun) watchedListed(stop <-chan struct{}) <-chan struct{} {
	listed := make(chan struct{})
	go func() {
		defer close(listed)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		for _, inf := range c.watched {
			if !inf.WaitForSync(ctx) {
				return
			}
		}
	}()
	return listed
}

// lastHappened is when a core Event last happened, as kubectl get events reads it: its
// series' last observation, else its lastTimestamp, eventTime, firstTimestamp, and at
// least its creation.
func lastHappened(ev *corev1.Event) time.Time {
	switch {
	case ev.Series != nil && !ev.Series.LastObservedTime.IsZero():
		return ev.Series.LastObservedTime.Time
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	case !ev.FirstTimestamp.IsZero():
		return ev.FirstTimestamp.Time
	}
	return ev.CreationTimestamp.Time
}
