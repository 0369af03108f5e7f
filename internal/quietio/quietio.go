// Package quietio reads and writes a watch's connection to the API server, and writes
// its lines to a pipe or a socket, without waking the Go runtime's monitor thread.
//
// Why: a watch spends most of its life idle, woken by one event at a time. The runtime
// brackets every ordinary system call (entersyscall) so that its monitor thread can hand
// the processor to other goroutines should the call block; when the process was idle,
// the first such call of an event wakes the monitor, which then polls every 20 µs until
// the process is idle again. Measured with perf on a rollout, the monitor's sleeps and
// wake-ups were a fifth of kubeevents' CPU, more than decoding the events: the socket's
// read woke it, and once reads no longer did, the line's write to stdout did
// (bench/README.md).
//
// # The fast paths and their invariant
//
// Both make their system calls raw, without the bracketing, which is only sound for a
// call that returns at once. The invariant, stated here and nowhere else:
//
//	A raw system call of this package never waits: for room, for data, for anything.
//
// It holds because
//   - the connection's socket is non-blocking (Go's net package makes every socket so and
//     waits for readiness in its poller): its reads and writes run inside
//     syscall.RawConn's Read and Write, which wait in the poller, honouring deadlines and
//     Close, whenever the call says EAGAIN. Dial checks the mode (fcntl) on every
//     connection and returns the plain connection where it does not hold;
//   - a pipe, a socket or a device is written with pwritev2(RWF_NOWAIT): the kernel
//     copies what fits and says EAGAIN rather than wait for the reader; the rest goes
//     through the file's own Write, bracketed, which may wait. A file that cannot honour
//     RWF_NOWAIT refuses it (EOPNOTSUPP: a terminal, a pipe on a kernel before 6.4): the
//     writer then uses the file's Write from then on.
//
// TestDialedSocketIsNonBlocking fails if Go's dialer stops making sockets non-blocking;
// TestFullOutputDoesNotHoldTheProcessor fails if a write to a full pipe or socket waits
// in a raw call. KUBEEVENTS_QUIET_READS=off and KUBEEVENTS_QUIET_STDOUT=off
// (internal/switches) turn them off.
package quietio

import (
	"context"
	"net"
	"time"
)

// dialer is what client-go dials with by default (transport/cache.go).
var dialer = &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}

// Dial dials as client-go does and returns a TCP connection that reads and writes
// without waking the system monitor, where the platform allows it; any other connection
// is returned as dialled.
func Dial(ctx context.Context, network, address string) (net.Conn, error) {
	conn, err := dialer.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return wrap(conn), nil
}
