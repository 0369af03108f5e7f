// Package quietconn dials the API server's TCP connections so that reading and writing
// them does not wake the Go runtime's system monitor.
//
// Why: a watch spends most of its life idle, woken by one event at a time. Every read
// of the socket is a system call, and the runtime brackets each one (entersyscall) so
// that its monitor thread can hand the processor to other goroutines if the call
// blocks. When the process was idle, that first call of an event wakes the monitor,
// which then polls every 20 µs until the process is idle again: measured with perf on
// a rollout, a fifth of kubeevents' CPU was the monitor's sleeps and wake-ups, more than
// decoding the events (bench/README.md).
//
// # The fast path and its invariant
//
// Go's net package puts every socket in non-blocking mode and waits for readiness in its
// poller, so a read or write on the socket returns at once: data, EAGAIN, or an error.
// A call that cannot block needs no bracketing, so the reads and writes are made as raw
// system calls inside syscall.RawConn's Read and Write, which wait in the poller
// (honouring deadlines and Close) whenever the call says EAGAIN. The invariant, stated
// here and nowhere else:
//
//	The connection's file descriptor is non-blocking.
//
// Dial checks it on every connection (fcntl) and returns the plain connection where it
// does not hold, and TestDialedSocketIsNonBlocking fails if Go's dialer ever stops
// making it so. Env (KUBEEVENTS_QUIET_CONN=off) turns the path off.
package quietconn

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"
)

// Env is the environment variable that turns the raw reads and writes off ("off"); "on"
// or unset leaves them on where the platform has them (Linux).
const Env = "KUBEEVENTS_QUIET_CONN"

// FromEnv reads Env through getenv: whether the quiet connections are on.
func FromEnv(getenv func(string) string) (bool, error) {
	switch value := getenv(Env); strings.ToLower(value) {
	case "", "on":
		return true, nil
	case "off":
		return false, nil
	default:
		return false, fmt.Errorf("%s=%q: want on or off", Env, value)
	}
}

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
