package leader

import "sync/atomic"

// DeliveryFence is what every sink's listener asks before it writes: Fence, said once
// (to warn) each time it closes and opens again. A leader that was paused past its
// lease's duration (a GC pause, a frozen VM, SIGSTOP) holds back what it has not written
// yet, rather than deliver it while another replica may lead; the one that leads
// delivers it from the checkpoint.
func (e *Elector) DeliveryFence(warn func(format string, args ...any)) func() error {
	var closed atomic.Bool
	return func() error {
		err := e.Fence()
		switch {
		case err != nil && closed.CompareAndSwap(false, true):
			warn("--leader-elect: %v; holding back what the sinks have not written (another replica may lead)", err)
		case err == nil && closed.CompareAndSwap(true, false):
			warn("--leader-elect: the lease %s was renewed; delivering again", e.Lease())
		}
		return err
	}
}
