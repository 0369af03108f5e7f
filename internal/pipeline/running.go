package pipeline

import (
	"context"

	"github.com/kubeevents/kubeevents/internal/event"
)

// Running runs a Source that the run does not wait for as it waits for the clusters' (a
// recording, the health step's stall timer) on a goroutine of its own, until its input
// ends or Stop. Its zero value runs nothing: Stop does nothing and Ended never answers.
type Running struct {
	cancel context.CancelFunc
	done   chan struct{}
	ended  chan error
}

// Start runs src, handing its events to take.
func (p *Running) Start(ctx context.Context, src Source, take func(*event.Event) bool) {
	ctx, p.cancel = context.WithCancel(ctx)
	p.done, p.ended = make(chan struct{}), make(chan error, 1)
	go func() {
		defer close(p.done)
		if err := src.Run(ctx, take); ctx.Err() == nil {
			p.ended <- err
		}
	}()
}

// Ended answers once the source's input is read to the end (nil) or it could not go on
// (why); not when it was stopped. A nil channel, never ready, before Start.
func (p *Running) Ended() <-chan error { return p.ended }

// Stop stops the source and waits until it no longer hands on events.
func (p *Running) Stop() {
	if p.cancel != nil {
		p.cancel()
		<-p.done
	}
}
